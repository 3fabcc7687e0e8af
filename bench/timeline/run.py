"""Benchmark: a campaign's timeline (campaigns/domain/timeline.py, docs/domain.md §7.7),
computed from its plan, its baseline, its runs and its lots, at 200 items.

Run from the project root: ``.venv/bin/python bench/timeline/run.py [--items 200] [--repeat 20]``.

Pure: no database (the loading is the campaign page's benchmark, bench/campaign_page/run.py).
The plan has a setup and a loading stage, then each item's training stage chained after the
previous one on its GPU (four GPUs), a validation stage per item after its training, a
retrieval stage after every validation, one human analysis stage; half the items have ended
full runs (a quarter of those stages also typed, with a reason), an eighth run now, a tenth are
cut, and two 7-day lots are reserved. It times ``timeline.build`` (target, issue 30: under
50 ms at 200 items) and the whole forecast (``estimates.domain.forecast.compute``: the item
forecasts, the timeline, the lot advice and the warnings), and prints a table; ``--output``
writes the figures as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

from campaigns.domain.observed_hours import RunRow  # noqa: E402
from campaigns.domain.timeline import (  # noqa: E402
    ItemPlan,
    LotPlan,
    StagePlan,
    TimelineInputs,
    build,
)
from estimates.domain import forecast  # noqa: E402
from estimates.domain.forecast_inputs import ForecastInputs, ItemInput  # noqa: E402

TARGET_MS = 50.0
D = Decimal


def _item_stages(i: int, previous: dict[str, int]) -> list[StagePlan]:
    gpu = f"gpu-{i % 4}"
    train = StagePlan(
        id=100 + 2 * i,
        name=f"train v{i}",
        kind="training",
        machine=True,
        resource=gpu,
        planned_hours=D(2),
        variant_id=i,
        depends_on=(previous.get(gpu, 2),),
        typed_hours=D("2.5") if i % 8 == 0 else None,
        typed_reason="clock" if i % 8 == 0 else "",
    )
    validation = StagePlan(
        id=101 + 2 * i,
        name=f"validate v{i}",
        kind="validation",
        machine=True,
        resource=gpu,
        planned_hours=D("0.5"),
        variant_id=i,
        depends_on=(train.id,),
    )
    previous[gpu] = validation.id
    return [train, validation]


def plan(items: int) -> TimelineInputs:
    stages = [
        StagePlan(
            id=1,
            name="setup",
            kind="setup",
            machine=True,
            resource="gpu-0",
            planned_hours=D(3),
            typed_hours=D(9),
        ),
        StagePlan(
            id=2,
            name="loading",
            kind="loading",
            machine=True,
            resource="gpu-0",
            planned_hours=D(5),
            depends_on=(1,),
        ),
    ]
    previous: dict[str, int] = {}
    for i in range(1, items + 1):
        stages += _item_stages(i, previous)
    validations = tuple(s.id for s in stages if s.kind == "validation")
    stages.append(
        StagePlan(
            id=90_000,
            name="retrieval",
            kind="retrieval",
            machine=True,
            resource="gpu-0",
            planned_hours=D(1),
            depends_on=validations,
        )
    )
    stages.append(
        StagePlan(
            id=90_001,
            name="analysis",
            kind="analysis",
            machine=False,
            planned_hours=D(4),
            depends_on=(90_000,),
        )
    )
    plans = tuple(
        ItemPlan(
            id=i,
            name=f"v{i}",
            planned_hours=D(2),
            reserved_hours=D(2),
            status="cut" if i % 10 == 0 else "planned",
            forecast_hours=2.0 * (1 + (i % 3) / 10),
        )
        for i in range(1, items + 1)
    )
    runs = tuple(
        RunRow(i, "full", "running" if i % 8 == 1 else "completed", D("2.2"), running_hours=D(1))
        for i in range(1, items + 1, 2)
    )
    lots = (LotPlan(label="RTX 4090, 7 days", hours=168.0, quantity=2),)
    return TimelineInputs(
        window_hours=D(168),
        stages=tuple(stages),
        items=plans,
        runs=runs,
        lots=lots,
        committed_stages=tuple(stages),
        committed_items=plans,
    )


def forecast_inputs(timeline: TimelineInputs) -> ForecastInputs:
    items = tuple(
        ItemInput(
            id=i.id,
            name=i.name,
            tier="useful",
            role="variant",
            status=i.status,
            gpu="",
            planned_hours=i.planned_hours,
            prep_hours=D(0),
            config={"tokens": 1e8},
        )
        for i in timeline.items
    )
    return ForecastInputs(
        campaign_id=1, currency="USD", budget=None, items=items, timeline=timeline
    )


def timed(fn: Any, repeat: int) -> list[float]:
    """Milliseconds of this process's CPU per call: the figure does not count the time other
    processes take the cores from it (this machine is shared), unlike the wall clock."""
    fn()  # warm-up
    out = []
    for _ in range(repeat):
        started = time.process_time()
        fn()
        out.append((time.process_time() - started) * 1000)
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--items", type=int, default=200)
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--output", type=Path)
    args = p.parse_args()
    inputs = plan(args.items)
    line = build(inputs)
    build_ms = timed(lambda: build(inputs), args.repeat)
    compute_ms = timed(lambda: forecast.compute(forecast_inputs(inputs)), max(1, args.repeat // 4))
    result = {
        "items": args.items,
        "stages": len(inputs.stages),
        "runs": len(inputs.runs),
        "calendar_hours": round(line.hours, 2),
        "planned_hours": round(line.planned_hours, 2),
        "timeline_ms": {"median": statistics.median(build_ms), "max": max(build_ms)},
        "forecast_ms": {"median": statistics.median(compute_ms), "max": max(compute_ms)},
        "target_ms": TARGET_MS,
        "meets_target": statistics.median(build_ms) < TARGET_MS,
    }
    print(f"{'what (CPU time)':<32}{'median ms':>12}{'max ms':>10}")
    print(
        f"{'timeline.build':<32}{result['timeline_ms']['median']:>12.2f}"
        f"{result['timeline_ms']['max']:>10.2f}"
    )
    print(
        f"{'forecast.compute (all of it)':<32}{result['forecast_ms']['median']:>12.2f}"
        f"{result['forecast_ms']['max']:>10.2f}"
    )
    print(
        f"{args.items} items, {len(inputs.stages)} stages, {len(inputs.runs)} runs: calendar "
        f"{line.hours:.2f} h (planned {line.planned_hours:.2f} h); target < {TARGET_MS} ms: "
        f"{'met' if result['meets_target'] else 'MISSED'}"
    )
    if args.output:
        args.output.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

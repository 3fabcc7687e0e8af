"""Benchmark: lot selection for 1,000 items and the calendar for 1,000 stages.

Run from the project root: ``.venv/bin/python bench/bench_plans.py [--repeat N] [--seed S]``.
Inputs are seeded random (mixed groups, GPU models, tiers), so runs are comparable. Prints the
median and minimum wall time per call, the cost found and how far it is above the proven lower
bound. Pure Python: no Django import, no database.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import TypeVar

# Runnable as a plain script: put the project root on the path without installing it.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from campaigns.domain.calendar import Stage, schedule
from estimates.domain.lot_selection import PlanItem, RentalPlanOffer, Selection, select_lots

GIB = 2**30
T = TypeVar("T")


def offers() -> list[RentalPlanOffer]:
    def plan(
        provider: str, name: str, gpu: str, gpus: int, mem: int, hours: float, price: str
    ) -> RentalPlanOffer:
        return RentalPlanOffer(provider, name, gpu, gpus, mem * GIB, hours, Decimal(price), "USD")

    return [
        plan("IteraGPU", "RTX 4090 3 days", "RTX 4090", 1, 24, 72, "47.14"),
        plan("IteraGPU", "RTX 4090 7 days", "RTX 4090", 1, 24, 168, "110.00"),
        plan("IteraGPU", "RTX 4090 30 days", "RTX 4090", 1, 24, 720, "390.00"),
        plan("IteraGPU", "B200 x2 3 days", "B200", 2, 192, 72, "310.00"),
        plan("IteraGPU", "B200 x2 7 days", "B200", 2, 192, 168, "620.00"),
        plan("Cloud", "H100 2 days", "H100", 1, 80, 48, "150.00"),
        plan("Cloud", "H100 7 days", "H100", 1, 80, 168, "480.00"),
    ]


def items(n: int, seed: int) -> list[PlanItem]:
    rng = random.Random(seed)
    gpus = ("RTX 4090", "RTX 4090", "B200", "H100", None)
    group_gpu = {f"g{k}": rng.choice(gpus) for k in range(max(1, n // 3))}
    out = []
    for k in range(n):
        group = rng.choice(sorted(group_gpu)) if rng.random() < 0.5 else None
        gpu = rng.choice((group_gpu[group], None)) if group else rng.choice(gpus)
        out.append(
            PlanItem(
                f"i{k}",
                round(rng.uniform(0.5, 40), 1),
                gpu,
                gpus_needed=2 if gpu == "B200" and rng.random() < 0.3 else 1,
                tier=rng.choice(("mandatory", "useful", "exploratory")),
                group=group,
            )
        )
    return out


def stages(n: int, seed: int) -> list[Stage]:
    rng = random.Random(seed)
    out = []
    for k in range(n):
        deps = tuple(f"s{d}" for d in rng.sample(range(k), min(k, rng.randint(0, 3))))
        machine = rng.random() < 0.7
        out.append(
            Stage(
                key=f"s{k}",
                machine=machine,
                resource=rng.choice(("gpu0", "gpu1", "gpu2", "gpu3", "lot-b200")),
                planned_hours=round(rng.uniform(0, 12), 1),
                depends_on=deps,
            )
        )
    return out


def timed(fn: Callable[[], T], repeat: int) -> tuple[list[float], T]:
    times = []
    result = fn()  # warm-up, and the result to report
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return times, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--stages", type=int, default=1000)
    args = parser.parse_args()

    catalog = offers()
    work = items(args.items, args.seed)
    for window in (168.0, 720.0):

        def run(w: float = window) -> Selection:
            return select_lots(work, w, catalog)

        times, sel = timed(run, args.repeat)
        gap = (sel.total / sel.lower_bound - 1) * 100 if sel.lower_bound else Decimal(0)
        print(
            f"select_lots  {len(work)} items, window {window:g} h: "
            f"median {statistics.median(times):.3f} s, min {min(times):.3f} s "
            f"({args.repeat} runs) | {sel.method}, {len(sel.lots)} lots, "
            f"total {sel.total} {sel.currency}, lower bound {sel.lower_bound} "
            f"(+{gap:.2f}%), unplaced {len(sel.unplaced)}"
        )

    calendar = stages(args.stages, args.seed)
    times, plan = timed(lambda: schedule(calendar, 720.0), args.repeat)
    print(
        f"schedule     {len(calendar)} stages: median {statistics.median(times):.3f} s, "
        f"min {min(times):.3f} s ({args.repeat} runs) | makespan {plan.makespan_hours:g} h, "
        f"critical path {len(plan.critical_path)} stages, fits 720 h: {plan.fits}"
    )
    assert "django" not in sys.modules, "the benchmark must stay Django-free"


if __name__ == "__main__":
    main()

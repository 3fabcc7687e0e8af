"""Benchmark of the estimates: lot selection for 1,000 items, and the forecast recompute of a
campaign of 500 items (compute_forecast, then the persistence of every estimate row).

Run from the project root:

    .venv/bin/python bench/estimates/run.py [--repeat 5] [--items 1000] [--campaign-items 500]

The database is a throwaway test database: SQLite in memory by default, or `test_<name>` on the
server of DATABASE_URL (PostgreSQL), created and dropped here. Celery runs inline (no broker
traffic): the benchmark measures the work a worker does, not the transport. Prints a table and
writes build/bench-estimates.json.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# A bench measures a local checkout as runserver serves it: DEBUG on (static files from the
# apps, no redirect to HTTPS), as it was before DEBUG became off by default.
os.environ.setdefault("DEBUG", "1")
# Recomputes triggered while the data is created run inline instead of going to a broker.
os.environ["CELERY_TASK_ALWAYS_EAGER"] = "1"
os.environ.setdefault("LOG_LEVEL", "WARNING")

T = TypeVar("T")


def timed(fn: Callable[[], T], repeat: int) -> tuple[list[float], T]:
    result = fn()  # warm-up, and the result to report
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return times, result


# --------------------------------------------------------------------------- lot selection


def bench_lots(n_items: int, seed: int, repeat: int) -> list[dict[str, Any]]:
    """The other engineer's generator (bench/bench_plans.py) when present, so figures compare."""
    from estimates.domain.lot_selection import select_lots

    try:
        from bench_plans import items, offers
    except ImportError:  # pragma: no cover - the file ships with the project
        raise SystemExit(
            "bench/bench_plans.py is missing: it generates the lot-selection input"
        ) from None
    catalog, work = offers(), items(n_items, seed)
    rows = []
    for window in (168.0, 720.0):

        def run(w: float = window) -> Any:
            return select_lots(work, w, catalog)

        times, sel = timed(run, repeat)
        gap = float(sel.total / sel.lower_bound - 1) * 100 if sel.lower_bound else 0.0
        rows.append(
            {
                "name": f"select_lots, window {window:g} h",
                "size": f"{len(work)} items",
                "median_s": statistics.median(times),
                "min_s": min(times),
                "queries": None,
                "detail": f"{sel.method}, {len(sel.lots)} lots, {sel.total} {sel.currency}, "
                f"+{gap:.2f}% over the lower bound, {len(sel.unplaced)} unplaced",
            }
        )
    return rows


# --------------------------------------------------------------------------- the forecast


def build_campaign(n_items: int, seed: int) -> Any:
    """A committed campaign: n items on 10 RTX 4090s, a training stage each (chained per GPU)
    after a setup stage, pilots for 40% of the items, finished runs for 10%."""
    from django.db import transaction

    from campaigns.models import (
        Campaign,
        CampaignStatus,
        LotReservation,
        PlanBaseline,
        PlannedItem,
        Run,
        Stage,
        Team,
        ThroughputSample,
    )
    from catalog.models import RentalPlan
    from catalog.services import seed_catalog

    rng = random.Random(seed)
    seed_catalog()
    with transaction.atomic():
        team, _ = Team.objects.get_or_create(name="bench")
        campaign = Campaign.objects.create(
            team=team,
            title=f"bench {n_items}",
            question="How long does a large campaign take?",
            corpus_name="bench",
            corpus_revision="1",
            window_hours=Decimal("720"),
            budget=Decimal("5000.00"),
            currency="USD",
        )
        items = PlannedItem.objects.bulk_create(
            PlannedItem(
                campaign=campaign,
                name=f"item {k}",
                role="baseline" if k == 0 else "variant",
                tier=rng.choice(("mandatory", "useful", "exploratory")),
                planned_hours=Decimal(str(round(rng.uniform(1, 8), 1))),
                gpu="RTX-4090",
                config=rng.choice(
                    (
                        {"tokens": rng.uniform(1e7, 5e7), "epochs": 2},
                        {"assumed_tokens_per_second": 2000},
                        {"lr": 1e-4},
                    )
                ),
            )
            for k in range(n_items)
        )
        resources = [f"gpu-{k}" for k in range(10)]
        setup = Stage.objects.bulk_create(
            Stage(campaign=campaign, name=f"setup {r}", kind="setup", resource=r, planned_hours=2)
            for r in resources
        )
        stages = Stage.objects.bulk_create(
            Stage(
                campaign=campaign,
                name=f"train {item.name}",
                kind="training",
                resource=resources[k % 10],
                variant=item,
                planned_hours=item.planned_hours,
            )
            for k, item in enumerate(items)
        )
        through = Stage.depends_on.through
        links = []
        previous = {s.resource: s for s in setup}
        for stage in stages:
            links.append(through(from_stage_id=stage.pk, to_stage_id=previous[stage.resource].pk))
            previous[stage.resource] = stage
        through.objects.bulk_create(links)
        plan = RentalPlan.objects.get(provider="IteraGPU", name="RTX 4090, 30 days")
        LotReservation.objects.create(campaign=campaign, plan=plan, quantity=10)
        runs = Run.objects.bulk_create(
            Run(
                team=team,
                campaign=campaign,
                run_id=f"bench-{campaign.pk}-{k}",
                variant=item,
                kind="pilot" if k % 10 < 4 else "full",
                status="running" if k % 10 < 9 else "completed",
                observed_hours=None if k % 10 < 9 else item.planned_hours * Decimal("1.1"),
                config={},
                config_digest="0" * 64,
            )
            for k, item in enumerate(items)
            if k % 10 < 4 or k % 10 == 9
        )
        ThroughputSample.objects.bulk_create(
            ThroughputSample(
                run=run, tokens_per_second=rng.uniform(800, 3000), gpus=1, measured_seconds=600
            )
            for run in runs
            if run.kind == "pilot"
        )
        PlanBaseline.objects.create(campaign=campaign, snapshot=campaign.snapshot())
        Campaign.objects.filter(pk=campaign.pk).update(status=CampaignStatus.COMMITTED)
    campaign.refresh_from_db()
    return campaign


def bench_forecast(n_items: int, seed: int, repeat: int) -> list[dict[str, Any]]:
    from django.db import connection, transaction
    from django.test.utils import CaptureQueriesContext

    from estimates import forecasts

    campaign = build_campaign(n_items, seed)

    def queries(fn: Callable[[], Any]) -> int:
        with CaptureQueriesContext(connection) as captured:
            fn()
        return len(captured)

    def new_version() -> int:
        # A plan change without its message: the benchmark lands the version itself.
        with transaction.atomic():
            return forecasts._bump(campaign.pk, create=True) or 0

    compute_times, forecast = timed(lambda: forecasts.compute_forecast(campaign), repeat)
    compute_queries = queries(lambda: forecasts.compute_forecast(campaign))

    # Worst case: every item's figures moved since the last landing (two forecasts alternate);
    # usual case: nothing moved but the version (one pilot moves one item out of 500).
    moved = dataclasses.replace(
        forecast,
        items=tuple(
            dataclasses.replace(i, forecast_hours=i.forecast_hours + 0.5) for i in forecast.items
        ),
    )
    forecasts.land_forecast(campaign.pk, new_version(), forecast)  # creates the item rows
    land_all_times, land_none_times = [], []
    for n in range(repeat):
        version = new_version()
        started = time.perf_counter()
        forecasts.land_forecast(campaign.pk, version, moved if n % 2 == 0 else forecast)
        land_all_times.append(time.perf_counter() - started)
    version = new_version()
    land_all_queries = queries(
        lambda: forecasts.land_forecast(
            campaign.pk, version, moved if repeat % 2 == 0 else forecast
        )
    )
    for _ in range(repeat):
        version = new_version()
        started = time.perf_counter()
        forecasts.land_forecast(campaign.pk, version, forecast)
        land_none_times.append(time.perf_counter() - started)
    version = new_version()
    land_none_queries = queries(lambda: forecasts.land_forecast(campaign.pk, version, forecast))

    recompute_times = []
    outcome = ""
    for _ in range(repeat):
        version = new_version()
        started = time.perf_counter()
        outcome = forecasts.recompute(campaign.pk, version)
        recompute_times.append(time.perf_counter() - started)
    version = new_version()
    recompute_queries = queries(lambda: forecasts.recompute(campaign.pk, version))
    assert outcome == "landed", outcome

    size = f"{n_items} items, {n_items + 10} stages"
    detail = (
        f"reserved {forecast.reserved_hours:.1f} h, forecast {forecast.forecast_hours:.1f} h, "
        f"time source {forecast.time_source}"
    )
    return [
        {
            "name": "compute_forecast",
            "size": size,
            "median_s": statistics.median(compute_times),
            "min_s": min(compute_times),
            "queries": compute_queries,
            "detail": detail,
        },
        {
            "name": "land_forecast, every row moved",
            "size": f"{n_items + 1} estimate rows",
            "median_s": statistics.median(land_all_times),
            "min_s": min(land_all_times),
            "queries": land_all_queries,
            "detail": "one transaction: lock, campaign row, bulk update of every item row",
        },
        {
            "name": "land_forecast, no row moved",
            "size": f"{n_items + 1} estimate rows",
            "median_s": statistics.median(land_none_times),
            "min_s": min(land_none_times),
            "queries": land_none_queries,
            "detail": "one transaction: lock, campaign row, one UPDATE stamping the version",
        },
        {
            "name": "recompute (task body)",
            "size": size,
            "median_s": statistics.median(recompute_times),
            "min_s": min(recompute_times),
            "queries": recompute_queries,
            "detail": "version check + compute + land",
        },
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--items", type=int, default=1000, help="lot-selection items")
    parser.add_argument("--campaign-items", type=int, default=500, help="forecast campaign items")
    parser.add_argument("--output", default=str(ROOT / "build" / "bench-estimates.json"))
    args = parser.parse_args()

    rows = bench_lots(args.items, args.seed, args.repeat)

    import django

    django.setup()
    from django.db import connection

    from bench.databases import throwaway_test_database

    with throwaway_test_database(connection):
        if connection.vendor == "postgresql":
            v = connection.pg_version  # type: ignore[attr-defined]
            vendor = f"PostgreSQL {v // 10000}.{v % 100}"
        else:
            vendor = f"SQLite {connection.Database.sqlite_version} (in memory)"  # type: ignore[attr-defined]
        small = bench_forecast(50, args.seed, args.repeat)
        rows += bench_forecast(args.campaign_items, args.seed, args.repeat)

    header = f"{'benchmark':<34} {'size':<26} {'median s':>9} {'min s':>8} {'queries':>8}"
    print(f"Estimates benchmark ({vendor}; Python {platform.python_version()})")
    print(header)
    print("-" * len(header))
    for r in rows:
        q = "" if r["queries"] is None else str(r["queries"])
        print(f"{r['name']:<34} {r['size']:<26} {r['median_s']:>9.4f} {r['min_s']:>8.4f} {q:>8}")
    for r in rows:
        print(f"  {r['name']}: {r['detail']}")
    big = [r["queries"] for r in rows[-len(small) :]]
    constant = [s["queries"] for s in small] == big
    print(
        f"SQL queries, 50 items vs {args.campaign_items}: "
        + ", ".join(f"{s['name']} {s['queries']} vs {b}" for s, b in zip(small, big, strict=True))
        + " (bulk writes go in batches of 200 rows)"
    )
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "database": vendor,
                "python": platform.python_version(),
                "repeat": args.repeat,
                "seed": args.seed,
                "rows": rows,
                "queries_for_50_items": [s["queries"] for s in small],
                "queries_constant_in_items": constant,
            },
            indent=2,
        )
    )
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

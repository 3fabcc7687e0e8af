"""Benchmark: spend over time and calibration for a team with many campaigns, time and queries.

Run from the project root: ``.venv/bin/python bench/money/run.py [--campaigns 100] [--repeat 5]``.

1. Recreates the PostgreSQL database ``cd_bench_money`` (``--db``) and migrates it.
2. Plans, for each of two teams, committed campaigns (``--campaigns`` for the large team, a
   tenth for the small one), each with two items, a stop rule, a training stage on an RTX 4090
   with observed hours (a calibration observation), an hourly rate, ``--runs`` runs (a third
   still running) and a ledger rental entry per finished run (bulk inserts: the ledger's
   append-only trigger only refuses updates and deletes).
3. Times, ``--repeat`` times (median and min), with the SQL queries counted:
   ``ledger.selectors.spend.spend_over_time`` of one campaign of each team (what
   ``GET /campaigns/{id}/spend/`` answers) and
   ``estimates.selectors.calibration.team_calibrations`` of
   each team (what ``GET /teams/{id}/calibration/`` answers; a forecast reads the same).
4. Prints a table and writes ``build/bench-money.json``; drops the database unless
   ``--keep-db``. Target: each under 200 ms for the large team, and the same number of queries
   for both teams.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))

from bench.databases import db_url, drop_database, recreate_database  # noqa: E402

BUILD = ROOT / "build"
TARGET_MS = 200.0


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--admin-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    p.add_argument("--db", default="cd_bench_money", help="database to (re)create")
    p.add_argument("--keep-db", action="store_true")
    p.add_argument("--campaigns", type=int, default=100, help="campaigns of the large team")
    p.add_argument("--runs", type=int, default=30, help="runs per campaign")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--output", type=Path, default=BUILD / "bench-money.json")
    return p.parse_args()


def setup_django(url: str) -> None:
    os.environ["DATABASE_URL"] = url
    os.environ["CELERY_BROKER_URL"] = ""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    # A bench measures a local checkout as runserver serves it: DEBUG on (static files from the
    # apps, no redirect to HTTPS), as it was before DEBUG became off by default.
    os.environ.setdefault("DEBUG", "1")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    import django

    django.setup()


def build_team(name: str, campaigns: int, runs: int) -> tuple[Any, Any]:
    """The team and one of its campaigns (the last one planned)."""
    from django.utils import timezone

    from campaigns.models import (
        Campaign,
        PlannedItem,
        Run,
        RunStatus,
        Stage,
        StopRule,
        Team,
    )
    from campaigns.services.plans import commit_plan
    from ledger.models import EntryKind, LedgerEntry

    team = Team.objects.create(name=name)
    now = timezone.now()
    last = None
    for n in range(campaigns):
        campaign = Campaign.objects.create(
            team=team,
            title=f"{name} campaign {n}",
            question="does the variant beat the baseline?",
            corpus_name="tickets",
            corpus_revision="abc123",
            budget=Decimal("500.00"),
            hourly_rate_per_gpu=Decimal("2.50"),
        )
        PlannedItem.objects.create(
            campaign=campaign, name="baseline", role="baseline", planned_hours=Decimal("10")
        )
        PlannedItem.objects.create(
            campaign=campaign,
            name="variant",
            tier="useful",
            planned_hours=Decimal("12"),
            gpu="RTX-4090",
        )
        StopRule.objects.create(campaign=campaign, kind="budget_overrun")
        stage = Stage.objects.create(
            campaign=campaign,
            name="train",
            kind="training",
            resource="rtx4090-a",
            planned_hours=Decimal("22"),
        )
        commit_plan(campaign=campaign)
        Stage.objects.filter(pk=stage.pk).update(observed_hours=Decimal(20 + n % 9))
        created = Run.objects.bulk_create(
            Run(
                team=team,
                campaign=campaign,
                run_id=f"{name}-{n}-{r}",
                gpus=1 + r % 2,
                config={"r": r},
                config_digest=Run.digest_config({"r": r}),
                status=RunStatus.RUNNING if r % 3 == 0 else RunStatus.COMPLETED,
                observed_hours=None if r % 3 == 0 else Decimal("2.5"),
                finished_at=None if r % 3 == 0 else now,
            )
            for r in range(runs)
        )
        Run.objects.filter(campaign=campaign).update(
            created_at=now - timedelta(hours=6), started_at=now - timedelta(hours=6)
        )
        LedgerEntry.objects.bulk_create(
            LedgerEntry(
                campaign=campaign,
                kind=EntryKind.RENTAL,
                description=f"Run {run.run_id}",
                amount=Decimal("6.25") * run.gpus,
                currency="USD",
                run=run,
            )
            for run in created
            if run.finished_at is not None
        )
        last = campaign
    return team, last


def measure(fn: Callable[[], Any], repeat: int) -> dict[str, Any]:
    from django.db import connection

    counted: list[str] = []

    def count(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        counted.append(sql)
        return execute(sql, params, many, context)

    fn()  # warm up
    times = []
    queries = 0
    for _ in range(repeat):
        counted.clear()
        with connection.execute_wrapper(count):
            start = time.perf_counter()
            fn()
            times.append((time.perf_counter() - start) * 1000)
        queries = len(counted)
    return {
        "median_ms": round(statistics.median(times), 1),
        "min_ms": round(min(times), 1),
        "queries": queries,
    }


def main() -> int:
    args = parse_args()
    url = db_url(args.admin_url, args.db)
    recreate_database(args.admin_url, args.db)
    try:
        setup_django(url)
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        from estimates.selectors.calibration import team_calibrations
        from ledger.selectors.spend import spend_over_time

        small = max(1, args.campaigns // 10)
        teams = {
            "large": build_team("large", args.campaigns, args.runs),
            "small": build_team("small", small, args.runs),
        }
        rows = []
        for label, (team, campaign) in teams.items():
            count = team.campaigns.count()
            for what, fn in (
                ("spend_over_time", lambda c=campaign: spend_over_time(c)),
                ("team_calibrations", lambda t=team: team_calibrations(t.pk)),
            ):
                rows.append(
                    {"team": label, "campaigns": count, "what": what, **measure(fn, args.repeat)}
                )
        print(
            f"{'team':<6} {'campaigns':>9} {'what':<18} {'median ms':>9} {'min ms':>7} "
            f"{'queries':>7}"
        )
        for r in rows:
            print(
                f"{r['team']:<6} {r['campaigns']:>9} {r['what']:<18} {r['median_ms']:>9} "
                f"{r['min_ms']:>7} {r['queries']:>7}"
            )
        large = [r for r in rows if r["team"] == "large"]
        same_queries = all(
            r["queries"]
            == next(s["queries"] for s in rows if s["team"] == "small" and s["what"] == r["what"])
            for r in large
        )
        fast = all(r["median_ms"] < TARGET_MS for r in large)
        print(
            f"target: under {TARGET_MS:.0f} ms for the large team: {'met' if fast else 'MISSED'}; "
            f"queries independent of the number of campaigns: "
            f"{'yes' if same_queries else 'NO'}"
        )
        BUILD.mkdir(exist_ok=True)
        args.output.write_text(
            json.dumps(
                {
                    "machine": platform.platform(),
                    "python": platform.python_version(),
                    "campaigns": args.campaigns,
                    "runs_per_campaign": args.runs,
                    "rows": rows,
                    "target_ms": TARGET_MS,
                    "met": fast and same_queries,
                },
                indent=2,
            )
        )
        return 0 if fast and same_queries else 1
    finally:
        if not args.keep_db:
            from django.db import connections

            connections.close_all()
            drop_database(args.admin_url, args.db)


if __name__ == "__main__":
    raise SystemExit(main())

"""Benchmark: the team portfolio page at 200 campaigns, time and queries.

Run from the project root: ``.venv/bin/python bench/portfolio/run.py [--campaigns 200]``.

1. Recreates the PostgreSQL database ``cd_bench_portfolio`` (``--db``) and migrates it.
2. Creates a large team (``--campaigns``) and a small one (a tenth), each campaign committed
   with an hourly rate, ``--entries`` ledger entries (rental, included, external), two
   deliverables (one accepted on every other campaign) and, on every fifth, a running hourly
   run; each team has a quarterly allowance for the quarter of today.
3. Times, ``--repeat`` times (median and min), with the SQL queries counted:
   ``ledger.selectors.portfolio.team_portfolio`` and the admin page itself
   (``/admin/campaigns/team/{id}/portfolio/``, rendered through Django's test client).
4. Prints a table and writes ``build/bench-portfolio.json``; drops the database unless
   ``--keep-db``. Target: the same number of queries for both teams; the page under 1 s at 200.
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


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--admin-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    p.add_argument("--db", default="cd_bench_portfolio", help="database to (re)create")
    p.add_argument("--keep-db", action="store_true")
    p.add_argument("--campaigns", type=int, default=200)
    p.add_argument("--entries", type=int, default=20, help="ledger entries per campaign")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--output", type=Path, default=BUILD / "bench-portfolio.json")
    return p.parse_args(argv)


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


def build_team(name: str, campaigns: int, entries: int) -> Any:
    from django.utils import timezone

    from campaigns.models import Campaign, Run, Team
    from ledger.domain import team_budget as tb
    from ledger.models import Deliverable, LedgerEntry
    from ledger.services.team_budget import set_allowance

    team = Team.objects.create(name=name)
    now = timezone.now()
    start = tb.period_bounds("quarter", now.date())[0]
    set_allowance(team=team, period_kind="quarter", period_start=start.date(),
                  amount=Decimal("50000"), currency="USD")  # fmt: skip
    made = Campaign.objects.bulk_create(
        Campaign(team=team, title=f"{name} campaign {n}", question="does A beat B?",
                 corpus_name="c", corpus_revision="r", budget=Decimal("500"),
                 hourly_rate_per_gpu=Decimal("2.50"), status="committed", committed_at=now)
        for n in range(campaigns)
    )  # fmt: skip
    kinds = ("rental", "included", "external")
    LedgerEntry.objects.bulk_create(
        LedgerEntry(campaign=c, kind=kinds[i % 3], description=f"e{i}",
                    amount=Decimal("3.25"), currency="USD")
        for c in made for i in range(entries)
    )  # fmt: skip
    Deliverable.objects.bulk_create(
        Deliverable(campaign=c, kind="predictions", corpus_name="t", corpus_revision=str(k),
                    accepted=(n % 2 == 0 and k == 0))
        for n, c in enumerate(made) for k in range(2)
    )  # fmt: skip
    Run.objects.bulk_create(
        Run(team=team, campaign=c, run_id=f"{name}-{n}", config={}, config_digest="x",
            status="running", gpus=2)
        for n, c in enumerate(made) if n % 5 == 0
    )  # fmt: skip
    Run.objects.filter(team=team).update(
        created_at=now - timedelta(hours=3), started_at=now - timedelta(hours=3)
    )
    return team


def measure(fn: Callable[[], Any], repeat: int) -> dict[str, Any]:
    from django.db import connection

    counted: list[str] = []

    def count(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        counted.append(sql)
        return execute(sql, params, many, context)

    fn()
    times = []
    for _ in range(repeat):
        counted.clear()
        with connection.execute_wrapper(count):
            start = time.perf_counter()
            fn()
            times.append((time.perf_counter() - start) * 1000)
    return {
        "median_ms": round(statistics.median(times), 1),
        "min_ms": round(min(times), 1),
        "queries": len(counted),
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    recreate_database(args.admin_url, args.db)
    try:
        setup_django(db_url(args.admin_url, args.db))
        from django.contrib.auth import get_user_model
        from django.core.management import call_command
        from django.test import Client
        from django.test.utils import setup_test_environment

        from campaigns.models import Membership
        from ledger.selectors.portfolio import team_portfolio

        call_command("migrate", verbosity=0)
        setup_test_environment()
        user = get_user_model().objects.create_user("bench", password="pw", is_staff=True)
        rows = []
        for label, count in (("large", args.campaigns), ("small", max(1, args.campaigns // 10))):
            team = build_team(label, count, args.entries)
            Membership.objects.create(team=team, user=user, role="viewer")
            client = Client()
            client.force_login(user)
            url = f"/admin/campaigns/team/{team.pk}/portfolio/"

            def page(c: Any = client, u: str = url) -> None:
                assert c.get(u).status_code == 200

            for what, fn in (
                ("team_portfolio", lambda t=team: team_portfolio(t.pk)),
                ("admin page", page),
            ):
                rows.append({"team": label, "campaigns": count, "what": what,
                             **measure(fn, args.repeat)})  # fmt: skip
        head = ("team", "campaigns", "what", "median ms", "min ms", "queries")
        print("{:6} {:>9} {:16} {:>10} {:>8} {:>8}".format(*head))
        for r in rows:
            print(f"{r['team']:6} {r['campaigns']:>9} {r['what']:16} {r['median_ms']:>10} "
                  f"{r['min_ms']:>8} {r['queries']:>8}")  # fmt: skip
        same: dict[str, set[int]] = {r["what"]: set() for r in rows}
        for r in rows:
            same[r["what"]].add(r["queries"])
        constant = all(len(v) == 1 for v in same.values())
        print("queries independent of the campaigns" if constant else "QUERIES GROW")
        args.output.parent.mkdir(parents=True, exist_ok=True)
        found = {"rows": rows, "constant_queries": constant, "python": platform.python_version()}
        args.output.write_text(json.dumps(found, indent=2))
        return 0 if constant else 1
    finally:
        if not args.keep_db:
            from django.db import connections

            connections.close_all()
            drop_database(args.admin_url, args.db)


if __name__ == "__main__":
    sys.exit(main())

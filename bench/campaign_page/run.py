"""Benchmark: the campaign admin page of a large campaign, time and SQL queries.

Run from the project root: ``.venv/bin/python bench/campaign_page/run.py [--repeat 5]``.

1. Recreates the PostgreSQL database ``cd_bench_page`` (``--db``), migrates it, and plans four
   campaigns with the same shape: 20 and 200 items (``--small``, ``--items``), each item with a
   training stage chained after the previous one on its GPU (four GPUs), two stop rules, a
   pending decision point; one of each size stays a draft, the other is committed (the
   planner's frozen plan, whose stage rows are read-only).
2. Renders ``/admin/campaigns/campaign/<id>/change/`` (the planner's page: every inline, the
   summary, the Gantt, the upper apps' panels) through Django's test client as a planner,
   ``--repeat`` times after one warm-up, counting the SQL queries of each rendering and the
   ``<option>`` elements of its HTML.
3. Prints a table and writes ``build/bench-campaign-page.json``. The database is dropped at the
   end unless ``--keep-db``. Targets (issue 21): the same number of queries at 20 and at 200
   items in each state; at 200 items under 1.5 s and under 1 MB of HTML.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))

from bench.databases import db_url, drop_database, recreate_database  # noqa: E402

BUILD = ROOT / "build"


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--admin-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    p.add_argument("--db", default="cd_bench_page", help="database to (re)create")
    p.add_argument("--keep-db", action="store_true", help="keep the database afterwards")
    p.add_argument("--items", type=int, default=200, help="items of the large campaign")
    p.add_argument("--small", type=int, default=20, help="items of the small campaign")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--output", type=Path, default=BUILD / "bench-campaign-page.json")
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


def plan(team: Any, title: str, items: int) -> Any:
    from campaigns.models import Campaign, DecisionPoint, PlannedItem, Stage, StopRule

    campaign = Campaign.objects.create(
        team=team,
        title=title,
        question="Which variant wins?",
        corpus_name="tickets",
        corpus_revision="abc123",
        window_hours=Decimal("2000"),
        budget=Decimal("50000.00"),
        currency="USD",
    )
    made = PlannedItem.objects.bulk_create(
        PlannedItem(
            campaign=campaign,
            name="baseline" if i == 0 else f"variant-{i}",
            role="baseline" if i == 0 else "variant",
            tier="mandatory" if i < max(1, items // 4) else "useful",  # a plan needs one
            planned_hours=Decimal("6"),
            rationale="beats the baseline by 1 F1",
            gpu="RTX 4090",
        )
        for i in range(items)
    )
    stages = Stage.objects.bulk_create(
        Stage(
            campaign=campaign,
            name=f"train-{item.name}",
            kind="training",
            resource=f"gpu-{i % 4}",
            variant=item,
            planned_hours=Decimal("6"),
        )
        for i, item in enumerate(made)
    )
    through = Stage.depends_on.through
    through.objects.bulk_create(
        through(from_stage_id=stages[i].pk, to_stage_id=stages[i - 4].pk)
        for i in range(4, len(stages))
    )
    StopRule.objects.create(campaign=campaign, kind="non_finite_loss", metric="loss")
    StopRule.objects.create(
        campaign=campaign, kind="custom", description="stop when the pilot diverges"
    )
    DecisionPoint.objects.create(campaign=campaign, label="after the pilot")
    return campaign


def measure(client: Any, campaign_id: int, repeat: int) -> dict[str, Any]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    url = f"/admin/campaigns/campaign/{campaign_id}/change/"
    assert client.get(url).status_code == 200  # warm-up: caches, template loading
    seconds: list[float] = []
    queries: list[int] = []
    for _ in range(repeat):
        with CaptureQueriesContext(connection) as captured:
            t0 = time.perf_counter()
            page = client.get(url)
            seconds.append(time.perf_counter() - t0)
        assert page.status_code == 200, page.status_code
        queries.append(len(captured))
    return {
        "median_s": statistics.median(seconds),
        "min_s": min(seconds),
        "queries": queries,
        "bytes": len(page.content),
        "options": page.content.count(b"<option"),
    }


def main() -> int:
    args = parse_args()
    url = db_url(args.admin_url, args.db)
    recreate_database(args.admin_url, args.db)
    try:
        setup_django(url)
        from django.conf import settings
        from django.contrib.auth import get_user_model
        from django.core.management import call_command
        from django.test import Client

        from campaigns.models import Membership, Team

        if "testserver" not in settings.ALLOWED_HOSTS and "*" not in settings.ALLOWED_HOSTS:
            settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
        call_command("migrate", verbosity=0)
        team = Team.objects.create(name="bench")
        user = get_user_model().objects.create_user("bench", is_staff=True)
        Membership.objects.create(team=team, user=user, role="planner")
        from campaigns.services.plans import commit_plan

        sizes = {"small": args.small, "large": args.items}
        campaigns: dict[tuple[str, str], int] = {}
        for label, n in sizes.items():
            campaigns[(label, "draft")] = plan(team, f"Bench {n} items", n).pk
            committed = plan(team, f"Bench {n} items, committed", n)
            commit_plan(campaign=committed, acting_user=user)
            campaigns[(label, "committed")] = committed.pk
        client = Client()
        client.force_login(user)
        results = {
            f"{label} {state}": {
                "items": sizes[label],
                "state": state,
                **measure(client, pk, args.repeat),
            }
            for (label, state), pk in campaigns.items()
        }
    finally:
        if not args.keep_db:
            from django.db import connections

            connections.close_all()
            drop_database(args.admin_url, args.db)

    print(
        f"{'campaign':<18}{'items':>7}{'median':>10}{'min':>10}{'queries':>10}{'KiB':>8}"
        f"{'options':>9}"
    )
    for label, r in results.items():
        print(
            f"{label:<18}{r['items']:>7}{r['median_s'] * 1000:>8.0f}ms{r['min_s'] * 1000:>8.0f}ms"
            f"{r['queries'][0]:>10}{r['bytes'] / 1024:>8.0f}{r['options']:>9}"
        )
    same = all(
        results[f"small {state}"]["queries"] == results[f"large {state}"]["queries"]
        for state in ("draft", "committed")
    )
    print(f"\nqueries independent of the number of items: {'yes' if same else 'NO'}")
    BUILD.mkdir(exist_ok=True)
    args.output.write_text(
        json.dumps(
            {
                "when": datetime.now(UTC).isoformat(timespec="seconds"),
                "machine": platform.platform(),
                "results": results,
                "queries_independent_of_items": same,
            },
            indent=2,
        )
    )
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""Benchmark: the runs table (docs/domain.md §5.10) at 10,000 runs and 50 metrics a run.

Run from the project root: ``.venv/bin/python bench/runs_table/run.py [--runs 10000]
[--metrics 50]`` (PostgreSQL on 127.0.0.1; see bench/README.md "The runs table").

1. Recreates the database ``cd_bench_runs_table`` (``--db``; dropped at the end unless
   ``--keep-db``), migrates it, commits a campaign with ``--runs`` runs (2 items, learning rates
   × seeds in their configuration, a tag each) and a small one of 30 runs beside it.
2. Loads each run's metric summaries by COPY (``--metrics`` a run: what the ingest's upsert
   maintains and the table reads; no points, which the table never reads).
3. Times the admin's runs table through Django's test client, the whole view (sign-in session,
   the layout, the count, the page's rows, the groups, the chooser), with three metric columns
   (two best, one latest) and two config columns chosen, sorted by a metric's best, filtered by
   status and grouped by the learning rate: the median of ``--repeat``, against the 1 s target.
4. Counts the page's SQL statements on the big campaign and on the small one: they must be
   equal (the page's cost does not grow with the runs or the metrics); exits 1 when not.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))

from bench.databases import db_url, drop_database, recreate_database  # noqa: E402

TARGET_MS = 1000.0
COLUMNS = [
    "field:item",
    "field:status",
    "metric:m00:best",
    "metric:loss:best",
    "metric:loss:latest",
    "config:lr",
    "config:seed",
]


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--admin-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    p.add_argument("--db", default="cd_bench_runs_table")
    p.add_argument("--runs", type=int, default=10_000)
    p.add_argument("--metrics", type=int, default=50)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--output", help="write the figures as JSON here")
    p.add_argument("--keep-db", action="store_true")
    return p.parse_args()


def make_runs(campaign, count: int) -> list[int]:  # type: ignore[no-untyped-def]
    from campaigns.models import Run

    items = list(campaign.items.order_by("id"))
    runs = []
    for n in range(count):
        config = {"lr": ["0.001", "0.0003", "0.0001"][n % 3], "seed": n // 3, "batch": 8}
        runs.append(
            Run(
                team=campaign.team,
                campaign=campaign,
                run_id=f"{campaign.pk}-run-{n}",
                run_name=f"lr={config['lr']} seed={config['seed']}",
                variant=items[n % len(items)],
                config=config,
                config_digest=Run.digest_config(config),
                status="completed" if n % 10 else "failed",
                tags={"sweep": "lr"},
            )
        )
    Run.objects.bulk_create(runs, batch_size=2000)
    return list(Run.objects.filter(campaign=campaign).values_list("id", flat=True))


def load_summaries(run_ids: list[int], metrics: int) -> float:
    """COPY ``metrics`` summaries a run (``loss`` and m00…): seconds taken."""
    from django.db import connection

    from campaigns.models import MetricSummary

    names = ["loss", *(f"m{i:02d}" for i in range(metrics - 1))]
    buf = io.StringIO()
    for n, run in enumerate(run_ids):
        for i, name in enumerate(names):
            low = 1.0 + (n * 7919 + i) % 1000 / 1000
            buf.write(
                f"{run}\t{name}\t100\t0\t99\t{low + 0.5}\t\t{low}\t{low + 2}\t0"
                "\t2026-01-01 00:00+00\t2026-01-01 01:00+00\tt\n"
            )
    table = MetricSummary._meta.db_table
    started = time.perf_counter()
    with connection.cursor() as cursor:
        with cursor.cursor.copy(
            f"COPY {table} (run_id, name, count, first_step, last_step, last_value, last_token, "
            "min_value, max_value, non_finite, first_at, last_at, points_kept) FROM STDIN"
        ) as copy:
            copy.write(buf.getvalue())
        cursor.execute(f"ANALYZE {table}")
        cursor.execute("ANALYZE campaigns_run")
    return time.perf_counter() - started


def page_url(campaign_id: int) -> str:
    query = (
        f"campaign={campaign_id}&status=completed&sort=metric:loss:best"
        "&group=config:lr&gm=metric:loss:best"
    )
    return f"/admin/campaigns/run/?{query}"


def measure(big, small, user, repeat: int) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """The page's statements at both sizes and its median time at the big one."""
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client()
    client.force_login(user)

    def statements(url: str) -> int:
        with CaptureQueriesContext(connection) as captured:
            answer = client.get(url)
        assert answer.status_code == 200, answer.status_code
        assert b'id="runs-groups"' in answer.content
        return len(captured.captured_queries)

    big_url, small_url = page_url(big.pk), page_url(small.pk)
    at_big, at_small = statements(big_url), statements(small_url)
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        client.get(big_url)
        samples.append((time.perf_counter() - started) * 1000)
    return {
        "page_ms_median": round(statistics.median(samples), 1),
        "statements_big": at_big,
        "statements_small": at_small,
    }


def setup_database(args: argparse.Namespace) -> tuple[object, object, object, float]:
    """Migrate; the big and the small campaign with their runs and summaries; the layout."""
    from django.core.management import call_command

    from campaigns.models import Team
    from campaigns.services.plans import commit_plan
    from campaigns.services.run_table import remember_columns
    from campaigns.tests.factories import make_plannable, make_user

    call_command("migrate", verbosity=0)
    team = Team.objects.create(name="bench")
    user = make_user("bench", team=team, role="owner")
    big, small = make_plannable(team), make_plannable(team, title="small")
    for campaign in (big, small):
        commit_plan(campaign=campaign, acting_user=user)
    load_s = load_summaries(make_runs(big, args.runs), args.metrics)
    load_summaries(make_runs(small, 30), args.metrics)
    remember_columns(acting_user=user, columns=COLUMNS)
    return big, small, user, load_s


def main() -> int:
    args = parse_args()
    recreate_database(args.admin_url, args.db)
    try:
        os.environ["DATABASE_URL"] = db_url(args.admin_url, args.db)
        os.environ["CELERY_BROKER_URL"] = ""
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
        os.environ.setdefault("DEBUG", "1")
        os.environ.setdefault("LOG_LEVEL", "WARNING")
        import django

        django.setup()
        big, small, user, load_s = setup_database(args)
        figures = {
            "runs": args.runs,
            "metrics": args.metrics,
            "summaries_loaded_s": round(load_s, 2),
            "target_ms": TARGET_MS,
            **measure(big, small, user, args.repeat),
        }
        page_ms, at_big, at_small = (
            figures["page_ms_median"], figures["statements_big"], figures["statements_small"]
        )  # fmt: skip
        print(f"{args.runs:,} runs x {args.metrics} metrics: summaries by COPY in {load_s:.1f} s")
        print(f"runs table page (3 metric + 2 config columns, sorted, filtered, grouped): "
              f"median {page_ms:.0f} ms of {args.repeat} (target {TARGET_MS:.0f} ms: "
              f"{'met' if page_ms < TARGET_MS else 'NOT met'})")  # fmt: skip
        print(f"SQL statements a page: {at_big} at {args.runs:,} runs, {at_small} at 30 runs")
        if args.output:
            Path(args.output).write_text(json.dumps(figures, indent=2))
        return 0 if at_big == at_small else 1
    finally:
        if not args.keep_db:
            from django.db import connections

            connections.close_all()
            drop_database(args.admin_url, args.db)


if __name__ == "__main__":
    raise SystemExit(main())

"""Benchmark: the metric store at scale (issue 21 item 6) on PostgreSQL.

Run from the project root:
``.venv/bin/python bench/scale/run.py [--points 3000000 --runs 300] [--keep-db]``
(``--points 30000000 --runs 2000`` for the full run; allow ~1 GB of disk per 10M points).

1. Recreates the database ``cd_bench_scale`` (``--db``), migrates it, commits a campaign and
   times the service's own ingest (``ingest.append_metrics``, 1,000-point batches, one client)
   against a bare COPY of the same rows, at the empty table.
2. Loads ``--points`` points over ``--runs`` runs: the largest run holds ``--big`` points
   (default a third, at most 1,000,000), the others share the rest. Bulk rows go in by COPY;
   their summaries and rollups by the store's own fold (``metric_store.record_points``) — what
   the ingest does per batch, done per run.
3. At the full table: ingest against COPY again; bytes per point (points table and its indexes,
   and the summaries and rollups apart); the series read of the largest run at max_points=500
   and 2,000 (selector and API); get-history's first page of 1,000 and a page deep in the run;
   the run page; the closing report's data (``ledger.selectors.closing_report``) of the campaign of
   ``--runs`` runs; the alert scan (``ledger.selectors.alerts.campaign_facts``) — each the
   median of ``--repeat`` with its query count.
   With ``--pack-while-loading`` each run is packed once loaded (the service packs a run
   ``METRIC_PACK_AFTER_SECONDS`` after it finishes), so the figures are the steady state of a
   table whose hot tier is the last interval's points.
4. With ``--pack``: every run's points packed into blocks (``metric_packing.pack_points``,
   timed; ``--block`` points a block instead of the store's), the readers' answers for the
   largest run compared with those before, then the sizes (points and blocks apart) and the
   reads again; then the hot tier's emptied indexes rebuilt and the sizes once more.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))

from bench.databases import db_url, drop_database, recreate_database  # noqa: E402


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--admin-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    p.add_argument("--db", default="cd_bench_scale")
    p.add_argument("--points", type=int, default=3_000_000)
    p.add_argument("--runs", type=int, default=300)
    p.add_argument("--big", type=int, default=0, help="points of the largest run")
    p.add_argument("--sample", type=int, default=20, help="1,000-point batches ingested")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--keep-db", action="store_true")
    p.add_argument(
        "--pack",
        action="store_true",
        help="then pack every run's points into blocks (timed) and measure again",
    )
    p.add_argument("--block", type=int, default=0, help="points per block (default the store's)")
    p.add_argument(
        "--pack-while-loading",
        action="store_true",
        help="pack each run as soon as it is loaded, as the service packs a finished run: the "
        "hot tier stays small while the table grows (no REINDEX needed for the steady state)",
    )
    p.add_argument(
        "--reuse",
        action="store_true",
        help="measure a database a previous --keep-db run loaded (no load; implies --keep-db)",
    )
    return p.parse_args(argv)


def timed(fn: Any, repeat: int) -> tuple[float, int]:
    """Median milliseconds of ``fn`` and its query count (of the last call)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    samples = []
    queries = 0
    for _ in range(repeat):
        # The query log keeps the last 9,000: emptied first, or a long load leaves it full
        # and the count reads 0.
        connection.queries_log.clear()
        with CaptureQueriesContext(connection) as ctx:
            started = time.perf_counter()
            fn()
            samples.append(time.perf_counter() - started)
        queries = len(ctx.captured_queries)
    return statistics.median(samples) * 1000, queries


def value(step: int, n: int) -> str:
    if step % 100_003 == 99_999:
        return "NaN"
    return repr(3.0 - step / max(n, 1) + (5.0 if step % 250_000 == 7 else 0.0))


def copy_rows(run_pk: int, key: int, seq: int, start: int, count: int, n: int) -> str:
    """COPY rows of the lean layout: the metric's key (its summary id) and each point's seq."""
    out = []
    head = f"{run_pk}\t{key}\t"
    for i, step in enumerate(range(start, start + count)):
        v = value(step, n)
        nf = "NaN" if v == "NaN" else ""
        out.append(f"{head}{step}\t{seq + i}\t{v}\t{nf}\t2026-01-01\t\n")
    return "".join(out)


def copy_in(text: str) -> None:
    from django.db import connection

    from campaigns.models import MetricPoint

    table = MetricPoint._meta.db_table
    with (
        connection.cursor() as cursor,
        cursor.cursor.copy(
            f"COPY {table} (run_id, key_id, step, seq, value, non_finite, created_at, model_id) "
            "FROM STDIN"
        ) as copy,
    ):
        copy.write(text)


def ingest_vs_copy(ctx: dict[str, Any], args: argparse.Namespace, tag: str) -> dict[str, float]:
    """Points per second of the service's ingest and of a bare COPY, 1,000-point batches."""
    from django.db import transaction
    from django.utils import timezone

    from campaigns.models import Run
    from campaigns.services import ingest, metric_store

    run, _ = ingest.open_run(ctx["campaign"], run_id=f"sample-{tag}", variant=ctx["item"])
    bare = Run.objects.create(
        team=ctx["team"], campaign=ctx["campaign"], run_id=f"copy-{tag}", config_digest="-"
    )
    # The bare COPY's rows need a key: one summary, made before the clock starts.
    [(key, _seq)] = metric_store.record_points(bare.pk, [("loss", 0, 1.0)], timezone.now()).values()
    started = time.perf_counter()
    for b in range(args.sample):
        batch = [
            ingest.Point("loss", s, 1.0 / (s + 1), "") for s in range(b * 1000, b * 1000 + 1000)
        ]
        ingest.append_metrics(run, batch)
    service = args.sample * 1000 / (time.perf_counter() - started)
    started = time.perf_counter()
    for b in range(args.sample):
        with transaction.atomic():
            copy_in(copy_rows(bare.pk, key, b * 1000, b * 1000, 1000, 1_000_000))
    copy = args.sample * 1000 / (time.perf_counter() - started)
    return {"service": service, "copy": copy}


def load(ctx: dict[str, Any], args: argparse.Namespace) -> tuple[Any, float]:
    """The bulk: runs, points by COPY, then their summaries and rollups by the store's fold."""
    from django.db import connection, transaction
    from django.utils import timezone

    from campaigns.models import Run
    from campaigns.services import metric_store

    big = args.big or min(args.points // 3, 1_000_000)
    rest = max(args.points - big, 0)
    per_run = rest // max(args.runs - 1, 1)
    runs = Run.objects.bulk_create(
        Run(
            team=ctx["team"],
            campaign=ctx["campaign"],
            run_id=f"r{i}",
            variant=ctx["item"],
            config_digest="-",
            status="completed",
        )
        for i in range(args.runs)
    )
    started = time.perf_counter()
    now = timezone.now()
    chunk = 200_000
    for i, run in enumerate(runs):
        n = big if i == 0 else per_run
        for start in range(0, n, chunk):
            count = min(chunk, n - start)
            with transaction.atomic():
                # The ingest's order: the fold first (its summary id is the points' key).
                pts = [
                    ("loss", s, math.nan if value(s, n) == "NaN" else float(value(s, n)))
                    for s in range(start, start + count)
                ]
                [(key, seq)] = metric_store.record_points(run.pk, pts, now).values()
                copy_in(copy_rows(run.pk, key, seq, start, count, n))
        Run.objects.filter(pk=run.pk).update(last_step=n - 1 if n else None)
        if args.pack_while_loading:
            from campaigns.services import metric_packing

            metric_packing.pack_points(
                run_id=run.pk, **({"block_size": args.block} if args.block else {})
            )
            # What autovacuum does in service after a pack's deletes (this machine's server
            # runs with autovacuum off): the hot partitions' emptied index pages are recycled
            # for the next points instead of the index growing with every point ever logged.
            with connection.cursor() as cursor:
                cursor.execute("VACUUM campaigns_metricpoint")
        if i == 0:
            # The alert scan with the largest run's points stored (1M at the full size): the
            # same scan is timed again at the full table.
            ctx["scan_first_run"] = (n, *alert_scan(ctx, args))
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    return runs[0], time.perf_counter() - started


def sizes() -> dict[str, tuple[Any, Any, Any]]:
    from django.db import connection

    from campaigns.models import MetricBlock, MetricPoint, MetricRollup, MetricSummary

    out = {}
    with connection.cursor() as cursor:
        for model in (MetricPoint, MetricBlock, MetricSummary, MetricRollup):
            table = model._meta.db_table
            # A partitioned table is empty itself: its partitions hold the rows.
            cursor.execute(
                "SELECT coalesce(sum(pg_table_size(relid)), pg_table_size(%s)), "
                "coalesce(sum(pg_indexes_size(relid)), pg_indexes_size(%s)) "
                "FROM pg_partition_tree(%s) WHERE isleaf",
                [table, table, table],
            )
            heap, index = cursor.fetchone()
            # A block's rows are its points.
            counted = "sum(count)" if model is MetricBlock else "count(*)"
            cursor.execute(f"SELECT coalesce({counted}, 0) FROM {table}")
            (rows,) = cursor.fetchone()
            out[table] = heap, index, rows
    return out


def reads(ctx: dict[str, Any], big_run: Any, args: argparse.Namespace) -> list[tuple[Any, ...]]:
    from django.test import Client
    from django.urls import reverse
    from django.utils import timezone

    from campaigns.selectors import run_metrics
    from campaigns.services.keys import issue_api_token
    from ledger.selectors import alerts
    from ledger.selectors.closing_report import collect

    _token, raw = issue_api_token(owner=ctx["user"])
    api = Client(HTTP_AUTHORIZATION=f"Token {raw}")
    url = f"/api/v1/runs/{big_run.run_id}/metrics/"
    page = reverse("admin:campaigns_run_change", args=[big_run.pk])
    browser = Client()
    browser.force_login(ctx["user"])
    deep = (big_run.last_step or 0) // 2
    rows = [
        (
            "series, selector, max_points=500",
            lambda: run_metrics.metric_series(big_run, "loss", 500),
        ),
        (
            "series, selector, max_points=2000",
            lambda: run_metrics.metric_series(big_run, "loss", 2000),
        ),
        (
            "GET metrics/?name=loss&max_points=500",
            lambda: api.get(url, {"name": "loss", "max_points": "500"}),
        ),
        (
            "get-history page of 1,000 (first)",
            lambda: run_metrics.history_page(big_run, "loss", limit=1000),
        ),
        (
            "get-history page of 1,000 (middle)",
            lambda: run_metrics.history_page(big_run, "loss", limit=1000, after=(deep, 0)),
        ),
        ("run page (admin)", lambda: browser.get(page)),
        (f"report data of {args.runs} runs (collect)", lambda: collect(ctx["campaign"])),
        (
            "alert scan (campaign_facts)",
            lambda: alerts.campaign_facts(ctx["campaign"], timezone.now()),
        ),
    ]
    got = run_metrics.metric_series(big_run, "loss", 500)
    assert got.points[-1][0] == got.count - 1 and len(got.points) <= 500
    return [(label, *timed(fn, args.repeat)) for label, fn in rows]


def alert_scan(ctx: dict[str, Any], args: argparse.Namespace) -> tuple[float, int]:
    from django.utils import timezone

    from ledger.selectors import alerts

    return timed(lambda: alerts.campaign_facts(ctx["campaign"], timezone.now()), args.repeat)


def setup() -> dict[str, Any]:
    from django.core.management import call_command

    from campaigns.models import Team
    from campaigns.services.plans import commit_plan
    from campaigns.tests.factories import make_plannable, make_user

    call_command("migrate", verbosity=0)
    team = Team.objects.create(name="bench")
    user = make_user("bench", team=team, role="owner")
    campaign = make_plannable(team)
    commit_plan(campaign=campaign, acting_user=user)
    return {"team": team, "user": user, "campaign": campaign, "item": campaign.items.first()}


def report(
    args: argparse.Namespace,
    empty: dict[str, Any] | None,
    full: dict[str, Any] | None,
    load_s: float,
    size: dict[str, Any],
    timings: list[Any],
) -> None:
    print(f"points {args.points:,} over {args.runs:,} runs; bulk load + fold {load_s:.0f} s")
    points = size["campaigns_metricpoint"][2] + size["campaigns_metricblock"][2]
    for table, (heap, index, rows) in size.items():
        print(
            f"{table:<26} rows {rows:>11,}  heap {heap / 2**20:>8.1f} MiB  indexes "
            f"{index / 2**20:>8.1f} MiB  {(heap + index) / max(points, 1):>6.1f} bytes/point"
        )
    total = sum(h + i for h, i, _ in size.values())
    print(f"{'all four':<26} {total / max(points, 1):.1f} bytes/point")
    for tag, r in (("empty", empty), ("full", full)):
        if r is None:
            continue
        print(
            f"ingest at the {tag} table: service {r['service']:,.0f} points/s, COPY "
            f"{r['copy']:,.0f} points/s, ratio {r['service'] / r['copy']:.2f}"
        )
    print(f"{'read':<44} {'median ms':>10} {'queries':>8}")
    for label, ms, queries in timings:
        print(f"{label:<44} {ms:>10.1f} {queries:>8}")


def pack_all(args: argparse.Namespace) -> float:
    """Every run's points into blocks (metric_packing.pack_points, one transaction a run),
    then VACUUM ANALYZE: seconds."""
    from django.db import connection

    from campaigns.models import Run
    from campaigns.services import metric_packing

    size = {"block_size": args.block} if args.block else {}
    started = time.perf_counter()
    for run_pk in Run.objects.order_by("pk").values_list("pk", flat=True):
        metric_packing.pack_points(run_id=run_pk, **size)
    packed = time.perf_counter() - started
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    vacuum = time.perf_counter() - started - packed
    print(f"packed in {packed:.0f} s, VACUUM ANALYZE {vacuum:.0f} s")
    return packed


def same_reads(big_run: Any) -> Any:
    """What the raw readers answer for the largest run: compared before and after packing."""
    from campaigns.selectors import run_metrics

    deep = (big_run.last_step or 0) // 2
    pages = [
        run_metrics.history_page(big_run, "loss", limit=1000, after=after)
        for after in (None, (deep, 0))
    ]
    series = run_metrics.metric_series(big_run, "loss", 500)
    return (
        [(p.step, p.seq, repr(p.as_float()), p.timestamp_ms) for page, _ in pages for p in page],
        [token for _page, token in pages],
        repr(series.points),
        run_metrics.client_marks(big_run, "loss", series.points),
        [(p.step, p.seq) for p in run_metrics.last_points([big_run.pk])[big_run.pk]],
    )


def packed_report(ctx: dict[str, Any], big_run: Any, args: argparse.Namespace) -> None:
    """Pack, compare the readers' answers, print the sizes and the reads again; the hot
    tier's emptied index pages (kept for the next points) are then reindexed and the sizes
    printed once more: the steady state of a table whose hot tier is the last interval."""
    from django.db import connection

    before = same_reads(big_run)
    pack_s = pack_all(args)
    assert same_reads(big_run) == before, "the readers answer differently after packing"
    size = sizes()
    timings = reads(ctx, big_run, args)
    print(f"--- after packing ({pack_s:.0f} s), the readers answering as before")
    report(args, None, None, 0.0, size, timings)
    with connection.cursor() as cursor:
        cursor.execute("REINDEX TABLE campaigns_metricpoint")
    print("--- the hot tier's emptied indexes rebuilt (REINDEX)")
    report(args, None, None, 0.0, sizes(), [])


def existing() -> tuple[dict[str, Any], Any]:
    """The context and the largest run of a database loaded before (``--reuse``)."""
    from django.contrib.auth import get_user_model

    from campaigns.models import Campaign, Run, Team

    team = Team.objects.get(name="bench")
    campaign = Campaign.objects.filter(team=team).get()
    ctx = {
        "team": team,
        "user": get_user_model().objects.get(username="bench"),
        "campaign": campaign,
        "item": campaign.items.first(),
    }
    return ctx, Run.objects.get(campaign=campaign, run_id="r0")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.reuse:
        args.keep_db = True
    else:
        recreate_database(args.admin_url, args.db)
    try:
        os.environ["DATABASE_URL"] = db_url(args.admin_url, args.db)
        os.environ["CELERY_BROKER_URL"] = ""
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
        # A bench measures a local checkout as runserver serves it: DEBUG on (static files from the
        # apps, no redirect to HTTPS), as it was before DEBUG became off by default.
        os.environ.setdefault("DEBUG", "1")
        os.environ.setdefault("LOG_LEVEL", "WARNING")
        import django

        django.setup()
        if args.reuse:
            ctx, big_run = existing()
            empty = scan_small = None
            load_s = 0.0
        else:
            ctx = setup()
            empty = ingest_vs_copy(ctx, args, "empty")
            scan_small = alert_scan(ctx, args)
            big_run, load_s = load(ctx, args)
        # A reused database holds the first measurement's sample runs: new names.
        full = ingest_vs_copy(ctx, args, f"full-{int(time.time())}" if args.reuse else "full")
        big_run.refresh_from_db()
        timings = reads(ctx, big_run, args)
        if scan_small is not None:
            timings.append(("alert scan at the empty table", *scan_small))
        if "scan_first_run" in ctx:
            n, ms, queries = ctx["scan_first_run"]
            timings.append((f"alert scan at {n:,} points (first run)", ms, queries))
        report(args, empty, full, load_s, sizes(), timings)
        if args.pack:
            packed_report(ctx, big_run, args)
        return 0
    finally:
        if not args.keep_db:
            from django.db import connections

            connections.close_all()
            drop_database(args.admin_url, args.db)


if __name__ == "__main__":
    raise SystemExit(main())

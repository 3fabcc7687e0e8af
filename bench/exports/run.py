"""Benchmark: the FOCUS ledger export of a team with a million entries, time and peak memory.

Run from the project root: ``.venv/bin/python bench/exports/run.py [--entries 1000000]``
(``--smoke``: 300 entries, what the test runs).

1. Recreates the PostgreSQL database ``cd_bench_exports`` (``--db``) and migrates it.
2. Creates a team with ``--campaigns`` campaigns and loads ``--entries`` ledger entries with
   PostgreSQL's ``COPY`` (rental, included and external, spread over one month, every 50th a
   reversal of the one before).
3. Exports that month as CSV and as Parquet through ``ledger.api.ledger_export.export_response``
   (what ``GET /teams/{id}/ledger/export`` answers), each in a forked child so that its peak
   resident memory (``ru_maxrss``) is its own; reads the whole body, counts rows and bytes,
   and checks that the exported ``BilledCost`` sums to the ledger's total.
4. Prints a table and writes ``build/bench-exports.json``; drops the database unless
   ``--keep-db``. Target: memory that does not grow with the number of entries (the CSV is
   streamed by chunks, the Parquet written in row groups).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import resource
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))

from bench.databases import db_url, drop_database, recreate_database  # noqa: E402

BUILD = ROOT / "build"
MONTH = datetime(2026, 3, 1, tzinfo=UTC)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--admin-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    p.add_argument("--db", default="cd_bench_exports", help="database to (re)create")
    p.add_argument("--keep-db", action="store_true")
    p.add_argument("--entries", type=int, default=1_000_000)
    p.add_argument("--campaigns", type=int, default=20)
    p.add_argument("--smoke", action="store_true", help="300 entries, 3 campaigns")
    p.add_argument("--output", type=Path, default=BUILD / "bench-exports.json")
    args = p.parse_args(argv)
    if args.smoke:
        args.entries, args.campaigns = 300, 3
    return args


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


def load(entries: int, campaigns: int) -> tuple[Any, Decimal]:
    """The team, and the total of the amounts loaded (reversals included)."""
    from django.db import connection

    from campaigns.models import Campaign, Team

    team = Team.objects.create(name="finance-bench")
    ids = [
        Campaign.objects.create(
            team=team, title=f"campaign {n}", question="q?", corpus_name="c", corpus_revision="r"
        ).pk
        for n in range(campaigns)
    ]
    kinds = ("rental", "included", "external")
    seconds = int(timedelta(days=28).total_seconds())
    total = Decimal(0)
    # run_segment: NOT NULL, 1 for an entry that is not a run's (its model default).
    columns = (
        "(id, campaign_id, kind, description, amount, currency, created_at, reverses_id, "
        "run_segment)"
    )
    with connection.cursor() as cursor:
        raw = cursor.connection
        with raw.cursor().copy(f"COPY ledger_ledgerentry {columns} FROM STDIN") as copy:
            for n in range(1, entries + 1):
                at = MONTH + timedelta(seconds=n * seconds // entries)
                if n % 50 == 0:
                    # Reverses the entry just before it: same campaign, kind, negated amount.
                    prev = n - 1
                    amount = -Decimal(100 + prev % 997) / 100
                    kind, campaign = kinds[prev % 3], ids[prev % campaigns]
                    copy.write_row(
                        (n, campaign, kind, f"reversal of #{prev}", amount, "USD", at, prev, 1)
                    )
                else:
                    amount = Decimal(100 + n % 997) / 100
                    kind, campaign = kinds[n % 3], ids[n % campaigns]
                    copy.write_row((n, campaign, kind, f"entry {n}", amount, "USD", at, None, 1))
                total += amount
        cursor.execute(
            "SELECT setval(pg_get_serial_sequence('ledger_ledgerentry', 'id'), %s)", [entries]
        )
        cursor.execute("ANALYZE ledger_ledgerentry")
    return team, total


def export_in_child(team_id: int, fmt: str) -> dict[str, Any]:
    """Fork; the child exports and reports rows, bytes, seconds, peak RSS and the cost sum."""
    from django.db import connections

    connections.close_all()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        os.close(read)
        result = _export(team_id, fmt)
        with os.fdopen(write, "w") as out:
            out.write(json.dumps(result))
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as source:
        text = source.read()
    os.waitpid(pid, 0)
    return dict(json.loads(text))


def _export(team_id: int, fmt: str) -> dict[str, Any]:
    from campaigns.models import Team
    from ledger.api.ledger_export import export_response

    team = Team.objects.get(pk=team_id)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    response = export_response(team, fmt, "month", MONTH.date())
    size, rows, billed = 0, 0, Decimal(0)
    if fmt == "csv":
        header: list[str] | None = None
        for chunk in response.streaming_content:
            text = chunk.decode() if isinstance(chunk, bytes) else chunk
            size += len(text)
            lines = text.splitlines()
            if header is None:
                header, lines = lines[0].split(","), lines[1:]
            col = header.index("BilledCost")
            for cells in csv.reader(lines):
                billed += Decimal(cells[col])
                rows += 1
    else:
        import pyarrow.parquet as pq

        sink = tempfile.TemporaryFile()  # noqa: SIM115 (closed with the child)
        for chunk in response.streaming_content:
            size += sink.write(chunk)
        sink.seek(0)
        parquet = pq.ParquetFile(sink)
        rows = parquet.metadata.num_rows
        for group in range(parquet.num_row_groups):
            column = parquet.read_row_group(group, columns=["BilledCost"]).column(0)
            billed += sum(column.to_pylist(), Decimal(0))
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    factor = 1 if platform.system() == "Darwin" else 1024  # Linux reports KiB
    return {
        "format": fmt,
        "rows": rows,
        "bytes": size,
        "seconds": round(seconds, 2),
        "rows_per_second": round(rows / seconds) if seconds else None,
        "peak_rss_mib": round(peak * factor / 2**20, 1),
        "rss_before_mib": round(before * factor / 2**20, 1),
        "billed_total": str(billed),
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    url = db_url(args.admin_url, args.db)
    recreate_database(args.admin_url, args.db)
    try:
        setup_django(url)
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        started = time.perf_counter()
        team, total = load(args.entries, args.campaigns)
        load_seconds = round(time.perf_counter() - started, 1)
        results = [export_in_child(team.pk, fmt) for fmt in ("csv", "parquet")]
        ok = all(r["rows"] == args.entries and Decimal(r["billed_total"]) == total for r in results)
        print(f"loaded {args.entries} entries by COPY in {load_seconds} s; ledger total {total}")
        print(f"{'format':8} {'rows':>9} {'MiB':>8} {'s':>7} {'rows/s':>8} {'peak RSS MiB':>13}")
        for r in results:
            print(
                f"{r['format']:8} {r['rows']:>9} {r['bytes'] / 2**20:>8.1f} {r['seconds']:>7} "
                f"{r['rows_per_second']:>8} {r['peak_rss_mib']:>13}"
            )
        print("sums match the ledger" if ok else "MISMATCH between the export and the ledger")
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(
            json.dumps(
                {
                    "entries": args.entries,
                    "campaigns": args.campaigns,
                    "load_seconds": load_seconds,
                    "ledger_total": str(total),
                    "results": results,
                    "sums_match": ok,
                    "python": platform.python_version(),
                },
                indent=2,
            )
        )
        return 0 if ok else 1
    finally:
        if not args.keep_db:
            from django.db import connections

            connections.close_all()
            drop_database(args.admin_url, args.db)


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: reading one metric of a 1,000,000-point run, downsampled to 500 points.

Run from the project root: ``.venv/bin/python bench/runs/run.py [--points 1000000]``.

1. Recreates the PostgreSQL database ``cd_bench_runs`` (``--db``; dropped at the end unless
   ``--keep-db``), migrates it, and plans a committed campaign with one run.
2. Loads ``--points`` points of ``loss`` (plus 10,000 of ``lr`` to make the index matter) with
   COPY: a slowly falling curve with one spike and a few NaN.
3. Times ``GET /api/v1/runs/{run_id}/metrics/?name=loss&max_points=500`` through Django's test
   client (the whole view: auth, read off the ``(run, name, step)`` index, downsampling, JSON),
   the names-with-counts read, and the run admin page; prints the median of ``--repeat`` and
   ``EXPLAIN`` of the series read, and checks the spike and the NaN survive.
"""

from __future__ import annotations

import argparse
import io
import math
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))

from bench.databases import db_url, drop_database, recreate_database  # noqa: E402


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--admin-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    p.add_argument("--db", default="cd_bench_runs")
    p.add_argument("--points", type=int, default=1_000_000)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--keep-db", action="store_true")
    return p.parse_args()


def timed(fn, repeat: int) -> float:  # type: ignore[no-untyped-def]
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1000


def main() -> int:
    args = parse_args()
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
        from django.core.management import call_command
        from django.db import connection
        from django.test import Client
        from django.urls import reverse
        from django.utils import timezone

        from campaigns.models import MetricPoint, Run, Team
        from campaigns.services import metric_store
        from campaigns.services.keys import issue_api_token
        from campaigns.services.plans import commit_plan
        from campaigns.tests.factories import make_plannable, make_user

        call_command("migrate", verbosity=0)
        team = Team.objects.create(name="bench")
        user = make_user("bench", team=team, role="owner")
        campaign = make_plannable(team)
        commit_plan(campaign=campaign, acting_user=user)
        run = Run.objects.create(
            team=team,
            campaign=campaign,
            run_id="big",
            variant=campaign.items.first(),
            config_digest="-",
        )
        spike, nans = args.points * 2 // 3, {args.points // 2, args.points // 2 + 7}
        folded = [
            ("loss", s, math.nan if s in nans else (50.0 if s == spike else 3.0 - s / args.points))
            for s in range(args.points)
        ] + [("lr", s, 0.0001) for s in range(10_000)]
        # The metric store's summaries and rollups of the bulk rows, by the ingest's own fold;
        # its summary ids are the points' keys (the lean layout).
        keys = metric_store.record_points(run.pk, folded, timezone.now())
        buf = io.StringIO()
        seqs = {name: seq for name, (_key, seq) in keys.items()}
        for name, step, value in folded:
            nan = "NaN" if math.isnan(value) else ""
            buf.write(
                f"{run.pk}\t{keys[name][0]}\t{step}\t{seqs[name]}\t{nan or value}\t{nan}"
                "\t2026-01-01\t\n"
            )
            seqs[name] += 1
        table = MetricPoint._meta.db_table
        started = time.perf_counter()
        with connection.cursor() as cursor:
            with cursor.cursor.copy(
                f"COPY {table} (run_id, key_id, step, seq, value, non_finite, created_at, "
                "model_id) FROM STDIN"
            ) as copy:
                copy.write(buf.getvalue())
            cursor.execute(f"ANALYZE {table}")
        load_s = time.perf_counter() - started

        _token, raw = issue_api_token(owner=user)
        client = Client(HTTP_AUTHORIZATION=f"Token {raw}")
        url = "/api/v1/runs/big/metrics/"
        query = {"name": "loss", "max_points": "500"}
        answer = client.get(url, query)
        body = answer.json()
        assert answer.status_code == 200, answer.content
        kept = {p["step"]: p["value"] for p in body["points"]}
        assert body["count"] == args.points and len(body["points"]) <= 500
        assert kept.get(spike) == 50.0 and all(kept.get(s) == "NaN" for s in nans)
        series_ms = timed(lambda: client.get(url, query), args.repeat)
        names_ms = timed(lambda: client.get(url), args.repeat)
        client.force_login(user)
        page = reverse("admin:campaigns_run_change", args=[run.pk])
        assert client.get(page).status_code == 200
        page_ms = timed(lambda: client.get(page), args.repeat)
        with connection.cursor() as cursor:
            cursor.execute(
                f"EXPLAIN SELECT step, value, non_finite FROM {table} "
                "WHERE run_id = %s AND key_id = %s ORDER BY step, seq",
                [run.pk, keys["loss"][0]],
            )
            plan = "\n".join(row[0] for row in cursor.fetchall())
        print(f"loaded {args.points:,} points (+10,000 of lr) by COPY in {load_s:.1f} s")
        print(f"{'read':<52} {'median ms':>10}")
        print(f"{'GET metrics/?name=loss&max_points=500':<52} {series_ms:>10.0f}")
        print(f"{'GET metrics/ (names with counts)':<52} {names_ms:>10.0f}")
        print(f"{'run admin page (every curve, 600 points each)':<52} {page_ms:>10.0f}")
        print(f"returned {len(body['points'])} of {body['count']:,}; spike and NaN kept")
        print("plan of the series read:\n" + plan)
        return 0
    finally:
        if not args.keep_db:
            from django.db import connections

            connections.close_all()
            drop_database(args.admin_url, args.db)


if __name__ == "__main__":
    raise SystemExit(main())

"""Benchmark: the closing report of a large campaign on PostgreSQL, time and SQL queries.

Run from the project root: ``.venv/bin/python bench/report/run.py [--repeat 3] [--keep-db]``.

1. Recreates the PostgreSQL database ``cd_bench_report`` (``--db``), migrates it, and plans two
   committed campaigns with the same plan: 200 items (``--items``) over four GPUs, one training
   stage per item plus the end-to-end stages, four stop rules, decisions, deliverables and
   ledger entries.
2. Loads what happened with psycopg's COPY: the large campaign gets 2,000 runs (``--runs``),
   1,000,000 metric points (``--points``) and a checkpoint per run; the small one a tenth of
   that (200 runs, 100,000 points), to show that the number of queries does not grow with runs.
3. Times ``ledger.selectors.closing_report.collect`` and the HTML, Markdown and JSON
   renderings, and the Celery task's body (``closing_reports.build``: collect, render and
   store) per campaign, ``--repeat`` times (median and min), counting the SQL queries of each.
4. Prints a table and writes ``build/bench-report.json``. The database is dropped at the end
   unless ``--keep-db``. Target: the same number of queries for both campaigns, and the large
   report built in under 10 s.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import platform
import random
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
TARGET_SECONDS = 10.0


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--admin-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    p.add_argument("--db", default="cd_bench_report", help="database to (re)create")
    p.add_argument("--keep-db", action="store_true", help="keep the database afterwards")
    p.add_argument("--items", type=int, default=200)
    p.add_argument("--runs", type=int, default=2000, help="runs of the large campaign")
    p.add_argument("--points", type=int, default=1_000_000, help="points of the large campaign")
    p.add_argument("--small-factor", type=int, default=10, help="the small one is N times less")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--seed", type=int, default=4)
    p.add_argument("--output", type=Path, default=BUILD / "bench-report.json")
    return p.parse_args()


def setup_django(url: str) -> None:
    os.environ["DATABASE_URL"] = url
    # The report is measured in this process; no broker, no worker.
    os.environ["CELERY_BROKER_URL"] = ""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    # A bench measures a local checkout as runserver serves it: DEBUG on (static files from the
    # apps, no redirect to HTTPS), as it was before DEBUG became off by default.
    os.environ.setdefault("DEBUG", "1")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


# --- The plan (ORM: small) ------------------------------------------------------------------


def plan_campaign(team: Any, user: Any, title: str, items: int, rng: random.Random) -> Any:
    from campaigns.models import (
        Campaign,
        DecisionPoint,
        LotReservation,
        PlannedItem,
        Stage,
        StopRule,
    )
    from campaigns.services.plans import commit_plan
    from catalog.models import RentalPlan

    campaign = Campaign.objects.create(
        team=team,
        title=title,
        question="Which of 200 configurations beats the baseline by 1 F1 on tickets?",
        corpus_name="tickets",
        corpus_revision="sha256:9f2c4e1b7a",
        window_hours=Decimal("720"),
        budget=Decimal("2000.00"),
        currency="USD",
        created_by=user,
    )
    tiers = ["mandatory"] * 2 + ["useful"] * 4 + ["exploratory"] * 4
    roles = {0: "baseline", 1: "data_check", 2: "resume_check"}
    planned = PlannedItem.objects.bulk_create(
        PlannedItem(
            campaign=campaign,
            name=f"item {n:03d}",
            role=roles.get(n, "variant"),
            tier="mandatory" if n in roles else tiers[n % len(tiers)],
            planned_hours=Decimal(rng.choice(["1.5", "2", "3", "4"])),
            config={"lora_rank": 2 ** (n % 7), "lr": 10 ** -(3 + n % 3), "seed": n},
        )
        for n in range(items)
    )
    for kind, extra in (
        ("non_finite_loss", {"metric": "loss"}),
        ("metric_threshold", {"metric": "val_f1", "comparator": "lt", "threshold": 0.2}),
        ("input_truncated", {"metric": "input_truncated"}),
        ("no_usable_resume", {}),
    ):
        StopRule.objects.create(campaign=campaign, kind=kind, **extra)

    def stage(name: str, kind: str, hours: str, resource: str = "gpu-0", **kw: Any) -> Any:
        return Stage.objects.create(
            campaign=campaign,
            name=name,
            kind=kind,
            resource=resource,
            planned_hours=Decimal(hours),
            **kw,
        )

    Stage.objects.create(
        campaign=campaign,
        name="Prepare configs",
        kind="human_prep",
        machine=False,
        planned_hours=Decimal("6"),
    )
    setup = stage("Install", "setup", "2")
    loading = stage("Load corpus", "loading", "2")
    loading.depends_on.add(setup)
    pilot = stage("Pilot", "pilot", "3")
    pilot.depends_on.add(loading)
    training = Stage.objects.bulk_create(
        Stage(
            campaign=campaign,
            name=f"Train {item.name}",
            kind="training",
            resource=f"gpu-{n % 4}",
            variant=item,
            planned_hours=item.planned_hours,
        )
        for n, item in enumerate(planned)
    )
    Stage.depends_on.through.objects.bulk_create(
        Stage.depends_on.through(from_stage_id=s.pk, to_stage_id=pilot.pk) for s in training
    )
    last = training
    for name, kind, hours in (
        ("Validate", "validation", "6"),
        ("Predict", "inference", "6"),
        ("Write outputs", "outputs", "1"),
        ("Checkpoint restore check", "checkpoint_io", "2"),
        ("Retrieve results", "retrieval", "1"),
    ):
        current = stage(name, kind, hours)
        current.depends_on.add(*last)
        last = [current]
    DecisionPoint.objects.create(campaign=campaign, label="after the pilot")
    plan = RentalPlan.objects.get(provider="IteraGPU", name="RTX 4090, 30 days")
    LotReservation.objects.create(campaign=campaign, plan=plan, quantity=4)
    commit_plan(campaign=campaign, acting_user=user)
    return campaign


def close_campaign(campaign: Any, user: Any, rng: random.Random) -> None:
    """Observed hours, a cut decision, deliverables and expenses: what a closing report reads."""
    from campaigns.models import PlannedItem, Stage
    from campaigns.services.decisions import record_decision
    from campaigns.services.observed_hours import record_observed_hours
    from ledger.services import post_entry, submit_deliverable

    for stage in Stage.objects.filter(campaign=campaign).order_by("id")[::2]:
        hours = (stage.planned_hours * Decimal(str(rng.uniform(0.8, 1.4)))).quantize(
            Decimal("0.01")
        )
        record_observed_hours(
            stage=stage,
            observed_hours=hours,
            deviation_note="measured",
            observed_reason="measured on the machine, not by the runs",
        )
    optional = list(
        PlannedItem.objects.filter(campaign=campaign, tier="exploratory").order_by("id")[:20]
    )
    record_decision(
        campaign=campaign,
        outcome="cut",
        rationale="the pilot ranks them last",
        acting_user=user,
        cut_variants=optional,
    )
    for n in range(40):
        submit_deliverable(
            campaign=campaign,
            kind="predictions" if n % 4 else "adapter",
            corpus_name=f"tickets-{n % 12}",
            corpus_revision="r1",
            files=[
                {"path": f"out/{n}/preds.jsonl", "size_bytes": 1000 + n, "sha256": "ab" * 32},
                {"path": f"out/{n}/manifest.json", "size_bytes": 200, "sha256": "cd" * 32},
            ],
            expected_ids_ok=n % 5 != 0,
            reload_verified=True,
            base_revision="meta-llama/Llama-3-8B@5f0b02c" if n % 8 else "",
        )
    post_entry(
        campaign=campaign,
        kind="included",
        description="storage",
        amount=Decimal("40.00"),
        currency="USD",
    )
    post_entry(
        campaign=campaign,
        kind="external",
        description="annotators",
        amount=Decimal("300.00"),
        currency="USD",
    )


# --- What happened (COPY: large) ------------------------------------------------------------


def _copy(conn: Any, statement: str, lines: Any, chunk: int = 1 << 20) -> None:
    with conn.cursor() as cur, cur.copy(statement) as copy:
        buf = io.StringIO()
        for line in lines:
            buf.write(line)
            if buf.tell() >= chunk:
                copy.write(buf.getvalue())
                buf = io.StringIO()
        copy.write(buf.getvalue())


def point_lines(run_ids: list[int], per_run: int, points: int, now: str) -> Any:
    """Each run's points in the lean layout: folded into their summaries and rollups first by
    the store's own code (metric_store.record_points), whose summary ids are the points' keys."""
    from django.utils import timezone

    from campaigns.services import metric_store

    left = points
    for run_id in run_ids:
        take = min(per_run, left)
        left -= take
        rows = []
        for step in range(take):
            if step == take - 1 and run_id % 5 == 0:
                rows.append(("loss", step, math.nan))
            else:
                rows.append(("loss" if step % 4 else "val_f1", step, round(1.0 / (step + 1), 6)))
        keys = metric_store.record_points(run_id, rows, timezone.now())
        seqs = {name: seq for name, (_key, seq) in keys.items()}
        for name, step, value in rows:
            nan = math.isnan(value)
            yield (
                f"{run_id}\t{keys[name][0]}\t{step}\t{seqs[name]}\t"
                f"{'NaN' if nan else f'{value:.6f}'}\t{'NaN' if nan else ''}\t{now}\t\n"
            )
            seqs[name] += 1


def load_runs(url: str, campaign: Any, runs: int, points: int, rng: random.Random) -> None:
    import psycopg

    from campaigns.models import PlannedItem, Run, StopRule

    items = list(
        PlannedItem.objects.filter(campaign=campaign).order_by("id").values_list("id", flat=True)
    )
    rule = StopRule.objects.filter(campaign=campaign, kind="non_finite_loss").values_list(
        "id", flat=True
    )[0]
    now = datetime.now(UTC).isoformat()
    per_run = max(1, points // runs)

    def run_lines() -> Any:
        for n in range(runs):
            roll = rng.random()
            status = "completed" if roll < 0.7 else "stopped" if roll < 0.9 else "failed"
            stopped = status == "stopped"
            config = json.dumps({"seed": n, "lr": 1e-4})
            yield (
                "\t".join(
                    [
                        str(campaign.team_id),
                        str(campaign.pk),
                        f"c{campaign.pk}-run-{n:05d}",
                        str(items[n % len(items)]),
                        "pilot" if n % 10 == 0 else "full",
                        config,
                        Run.digest_config(json.loads(config)),
                        status,
                        str(rule) if stopped else r"\N",
                        "loss is NaN at step 40" if stopped else "",
                        "40" if stopped else r"\N",
                        now if stopped else r"\N",
                        f"{rng.uniform(0.2, 6):.2f}",
                        str(per_run),
                        now,
                        now,
                        "{}",
                        "1",
                        "[]",
                        "0",
                        "",
                    ]
                )
                + "\n"
            )

    with psycopg.connect(url) as conn:
        _copy(
            conn,
            "COPY campaigns_run (team_id, campaign_id, run_id, variant_id, kind, config, "
            "config_digest, status, stop_rule_id, stop_reason, stop_step, stopped_at, "
            "observed_hours, last_step, created_at, finished_at, tags, gpus, inputs, "
            "prior_hours, run_name) FROM STDIN",
            run_lines(),
        )
        run_ids = [
            row[0]
            for row in conn.execute(
                "SELECT id FROM campaigns_run WHERE campaign_id = %s ORDER BY id", [campaign.pk]
            )
        ]

        conn.commit()  # the runs, for the fold below (Django's own connection)
        _copy(
            conn,
            "COPY campaigns_metricpoint (run_id, key_id, step, seq, value, non_finite, "
            "created_at, model_id) FROM STDIN",
            point_lines(run_ids, per_run, points, now),
        )
        components = json.dumps(["model", "optimizer", "progress"])

        def checkpoint_lines() -> Any:
            for run_id in run_ids:
                verified = "t" if run_id % 4 == 0 else "f"
                yield (
                    f"{run_id}\t40\t{components}\t{1 << 30}\t12.5\t40.0\t"
                    f"s3://ckpts/{run_id}/step-40\t{verified}\t{now}\tf\n"
                )

        _copy(
            conn,
            "COPY campaigns_checkpoint (run_id, step, components, size_bytes, write_seconds, "
            "restore_seconds, location, resume_verified, created_at, retrieved) FROM STDIN",
            checkpoint_lines(),
        )
        conn.execute("ANALYZE")


# --- Measuring ---------------------------------------------------------------------------


def measure(campaign_id: int, repeat: int) -> dict[str, Any]:
    from django.db import connection, reset_queries
    from django.test.utils import CaptureQueriesContext

    from campaigns.models import Campaign
    from ledger.models import Report
    from ledger.rendering.closing_report import render
    from ledger.selectors.closing_report import collect
    from ledger.services.closing_reports import build

    timings: dict[str, list[float]] = {
        "collect": [],
        "html": [],
        "markdown": [],
        "json": [],
        "task": [],
    }
    queries: dict[str, int] = {}
    sizes: dict[str, int] = {}
    for _ in range(repeat):
        # The query log keeps its last 9,000 entries: once the setup filled it, a capture's
        # slice of it is empty and counts 0 queries. Start each measure from an empty log.
        reset_queries()
        campaign = Campaign.objects.select_related("team", "committed_by").get(pk=campaign_id)
        with CaptureQueriesContext(connection) as collected:
            start = time.perf_counter()
            data = collect(campaign)
            timings["collect"].append(time.perf_counter() - start)
        queries["collect"] = len(collected.captured_queries)
        for fmt in ("html", "markdown", "json"):
            start = time.perf_counter()
            text = render(data, fmt)
            timings[fmt].append(time.perf_counter() - start)
            sizes[fmt] = len(text.encode())
        report = Report.objects.create(campaign_id=campaign_id)
        reset_queries()
        with CaptureQueriesContext(connection) as built:
            start = time.perf_counter()
            done = build(report.pk)
            timings["task"].append(time.perf_counter() - start)
        assert done is not None and done.status == "ready", done and done.error
        queries["task"] = len(built.captured_queries)
    return {
        "seconds": {k: {"median": statistics.median(v), "min": min(v)} for k, v in timings.items()},
        "queries": queries,
        "bytes": sizes,
        "runs": data["runs"]["total"],
        "metric_points": data["runs"]["metric_points"],
        "checkpoints": data["checkpoints"]["total"],
        "stages": data["hours"]["totals"]["stages"],
        "items": sum(len(t["items"]) for t in data["items"]["tiers"]),
        "cost_per_accepted": data["cost_per_accepted"]["cost_per_accepted"],
    }


def main() -> int:
    args = parse_args()
    url = db_url(args.admin_url, args.db)
    recreate_database(args.admin_url, args.db)
    try:
        setup_django(url)
        from django.contrib.auth import get_user_model
        from django.core.management import call_command
        from django.db import connection

        from campaigns.models import Membership, Team

        started = time.perf_counter()
        call_command("migrate", verbosity=0)
        rng = random.Random(args.seed)
        team = Team.objects.create(name="bench")
        user = get_user_model().objects.create_user("bench")
        Membership.objects.create(team=team, user=user, role="owner")
        sizes = {
            "small": (args.runs // args.small_factor, args.points // args.small_factor),
            "large": (args.runs, args.points),
        }
        campaigns = {}
        for label, (runs, points) in sizes.items():
            campaign = plan_campaign(team, user, f"Bench {label}", args.items, rng)
            close_campaign(campaign, user, rng)
            t0 = time.perf_counter()
            load_runs(url, campaign, runs, points, rng)
            print(
                f"loaded {label}: {runs:,} runs, {points:,} points in "
                f"{time.perf_counter() - t0:.1f} s (COPY)"
            )
            campaigns[label] = campaign.pk
        print(f"data ready in {time.perf_counter() - started:.1f} s; measuring…\n")
        results = {label: measure(pk, args.repeat) for label, pk in campaigns.items()}
        with connection.cursor() as cursor:
            cursor.execute("SHOW server_version")
            server = cursor.fetchone()[0]
    finally:
        if not args.keep_db:
            from django.db import connections

            connections.close_all()
            drop_database(args.admin_url, args.db)

    header = (
        f"{'campaign':<8} {'runs':>6} {'points':>10} {'ckpts':>6} {'queries':>8} "
        f"{'collect s':>10} {'html s':>7} {'md s':>6} {'json s':>7} {'task s':>7} "
        f"{'task q':>7} {'html KB':>8}"
    )
    print(header)
    print("-" * len(header))
    for label, r in results.items():
        s = r["seconds"]
        print(
            f"{label:<8} {r['runs']:>6,} {r['metric_points']:>10,} {r['checkpoints']:>6,} "
            f"{r['queries']['collect']:>8} {s['collect']['median']:>10.3f} "
            f"{s['html']['median']:>7.3f} {s['markdown']['median']:>6.3f} "
            f"{s['json']['median']:>7.3f} {s['task']['median']:>7.3f} "
            f"{r['queries']['task']:>7} {r['bytes']['html'] / 1024:>8.0f}"
        )
    same = results["small"]["queries"] == results["large"]["queries"]
    fast = results["large"]["seconds"]["task"]["median"] < TARGET_SECONDS
    print(
        f"\nmedian of {args.repeat}; queries {'identical' if same else 'DIFFER'} for "
        f"{results['small']['runs']:,} and {results['large']['runs']:,} runs; large report "
        f"built (task) in {results['large']['seconds']['task']['median']:.2f} s "
        f"(target < {TARGET_SECONDS:.0f} s: {'met' if fast else 'NOT met'})."
    )
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(
        json.dumps(
            {
                "benchmark": "closing report",
                "at": datetime.now(UTC).isoformat(),
                "machine": {
                    "python": platform.python_version(),
                    "platform": platform.platform(),
                    "cpus": os.cpu_count(),
                    "postgresql": server,
                },
                "parameters": {
                    "items": args.items,
                    "runs": args.runs,
                    "points": args.points,
                    "small_factor": args.small_factor,
                    "repeat": args.repeat,
                    "seed": args.seed,
                },
                "results": results,
                "queries_bounded": same,
                "target_seconds": TARGET_SECONDS,
                "target_met": fast,
            },
            indent=2,
        )
        + "\n"
    )
    print(f"wrote {args.output}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())

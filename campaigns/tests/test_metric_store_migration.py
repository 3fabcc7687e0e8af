"""Migration 0011 folds every existing point into its run's summaries and rollups, batch by
batch, so the series read from them is the one the old points give (docs/metric_store.md §1)."""

from __future__ import annotations

import math
from importlib import import_module

from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import TransactionTestCase

from campaigns.domain import metric_rollups as mr

BEFORE = [("campaigns", "0010_h18_stage_kind_analysis")]
AFTER = [("campaigns", "0011_h21_metric_summaries_rollups")]
LEAN = [("campaigns", "0015_h21store_lean_points")]


class MigrationTestCase(TransactionTestCase):
    def tearDown(self) -> None:
        # Back to the latest schema for the tests that follow on this database.
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())
        super().tearDown()


class BackfillKeepsEveryPoint(MigrationTestCase):
    def test_every_point_is_counted_and_the_series_is_the_raw_one(self) -> None:
        executor = MigrationExecutor(connection)
        executor.migrate(BEFORE)
        apps = executor.loader.project_state(BEFORE).apps
        Team = apps.get_model("campaigns", "Team")
        Campaign = apps.get_model("campaigns", "Campaign")
        Run = apps.get_model("campaigns", "Run")
        Point = apps.get_model("campaigns", "MetricPoint")
        team = Team.objects.create(name="old")
        campaign = Campaign.objects.create(team=team, title="old", currency="USD")
        run = Run.objects.create(team=team, campaign=campaign, run_id="old", config_digest="-")
        # More points than one batch of the migration, out of order, with NaN and repeats.
        migration = import_module("campaigns.migrations.0011_h21_metric_summaries_rollups")
        migration.BATCH = 700
        raw = [((s * 7919) % 2000, math.nan if s % 97 == 0 else s / 3) for s in range(2500)]
        raw += raw[:50]
        Point.objects.bulk_create(
            Point(
                run=run,
                name="loss",
                step=s,
                value=None if math.isnan(v) else v,
                non_finite="NaN" if math.isnan(v) else "",
            )
            for s, v in raw
        )
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(AFTER)
        apps = executor.loader.project_state(AFTER).apps
        Summary = apps.get_model("campaigns", "MetricSummary")
        Rollup = apps.get_model("campaigns", "MetricRollup")
        summary = Summary.objects.get(run_id=run.pk, name="loss")
        assert summary.count == len(raw) == Point.objects.count()
        assert summary.non_finite == sum(1 for _, v in raw if math.isnan(v))
        expected = mr.rollup(raw)
        stored = {
            (r.level, r.bucket): (r.count, r.min_step, r.max_step, r.non_finite)
            for r in Rollup.objects.filter(summary_id=summary.pk)
        }
        assert stored == {
            key: (b.count, b.min_step, b.max_step, b.non_finite) for key, b in expected.items()
        }
        for level in mr.LEVELS:
            assert sum(c for (k, _), (c, *_rest) in stored.items() if k == level) == len(raw)


class TheLeanLayoutKeepsEveryPoint(MigrationTestCase):
    def test_every_old_point_is_moved_under_its_metric_key_in_logging_order(self) -> None:
        executor = MigrationExecutor(connection)
        executor.migrate(BEFORE)
        apps = executor.loader.project_state(BEFORE).apps
        Team = apps.get_model("campaigns", "Team")
        Campaign = apps.get_model("campaigns", "Campaign")
        Run = apps.get_model("campaigns", "Run")
        Point = apps.get_model("campaigns", "MetricPoint")
        team = Team.objects.create(name="old")
        campaign = Campaign.objects.create(team=team, title="old", currency="USD")
        runs = [
            Run.objects.create(team=team, campaign=campaign, run_id=f"r{i}", config_digest="-")
            for i in range(3)
        ]
        # Two metrics per run, repeated steps, a NaN, client timestamps and a model id.
        old = []
        for n, run in enumerate(runs):
            for i in range(40 + n):
                name = "loss" if i % 3 else "acc"
                nan = i == 7
                old.append(
                    Point(
                        run=run,
                        name=name,
                        step=i // 2,
                        value=None if nan else i / 4,
                        non_finite="NaN" if nan else "",
                        timestamp_ms=1_700_000_000_000 + i if n == 1 else None,
                        model_id="m-ab" if i == 5 else "",
                    )
                )
        Point.objects.bulk_create(old)
        expected = sorted(
            (p.run_id, p.name, p.step, i, p.value, p.non_finite, p.timestamp_ms, p.model_id)
            for i, p in enumerate(Point.objects.order_by("id"))
        )
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(LEAN)
        apps = executor.loader.project_state(LEAN).apps
        Lean = apps.get_model("campaigns", "MetricPoint")
        moved = list(
            Lean.objects.values_list(
                "run_id",
                "key__name",
                "step",
                "seq",
                "value",
                "non_finite",
                "timestamp_ms",
                "model_id",
                "key__run_id",
            )
        )
        assert len(moved) == len(old)
        assert all(row[0] == row[-1] for row in moved)  # each key is its own run's metric
        # seq numbers each metric's points 0, 1, ... in the order they were logged.
        for run in runs:
            for name in ("acc", "loss"):
                seqs = [r[3] for r in moved if r[0] == run.pk and r[1] == name]
                assert sorted(seqs) == list(range(len(seqs)))
        by_order = {(r[0], r[1], r[3]): (r[2], r[4], r[5], r[6], r[7]) for r in moved}
        logged: dict[tuple[int, str], int] = {}
        for run_pk, name, step, _i, value, token, stamp, model in sorted(
            expected, key=lambda e: e[3]
        ):
            seq = logged.get((run_pk, name), 0)
            logged[(run_pk, name)] = seq + 1
            assert by_order[(run_pk, name, seq)] == (step, value, token, stamp, model)

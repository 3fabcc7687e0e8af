"""Migration 0009 folds every existing point into its run's summaries and rollups, batch by
batch, so the series read from them is the one the old points give (docs/architecture.md,
"Metric store")."""

from __future__ import annotations

import math
from importlib import import_module

from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import TransactionTestCase

from campaigns.domain import metric_rollups as mr

BEFORE = [("campaigns", "0010_h18_stage_kind_analysis")]
AFTER = [("campaigns", "0011_h21_metric_summaries_rollups")]


def migrate_to_the_latest() -> None:
    """Put the schema back at every app's newest migration: the tests after this one (and any
    migration after 0011) need it."""
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


class BackfillKeepsEveryPoint(TransactionTestCase):
    def test_every_point_is_counted_and_the_series_is_the_raw_one(self) -> None:
        self.addCleanup(migrate_to_the_latest)
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

"""The metric store's storage on PostgreSQL: the points table is hash-partitioned by run, and a
team's retention drops old raw points while their summaries and rollups keep the curves
(docs/domain.md §27, docs/metric_store.md §4)."""

from __future__ import annotations

import math
import unittest
from datetime import datetime, timedelta

from django.db import connection
from django.test import TestCase
from django.utils import timezone

from campaigns.models import MetricPoint, MetricRollup, MetricSummary, Run, Team
from campaigns.selectors import run_metrics
from campaigns.services import metric_store
from campaigns.tasks import drop_old_metric_points
from campaigns.tests.factories import add_points, committed_campaign, make_run

POSTGRES = connection.vendor == "postgresql"
needs_postgres = unittest.skipUnless(POSTGRES, "needs PostgreSQL: set DATABASE_URL")


def _curve(n: int) -> list[tuple[str, int, float]]:
    return [("loss", s, math.nan if s == 70 else 3.0 - s / n) for s in range(n)]


@needs_postgres
class PointsArePartitionedByRun(TestCase):
    def test_points_and_rollups_have_sixteen_hash_partitions_and_a_run_lives_in_one(
        self,
    ) -> None:
        team = Team.objects.create(name="nlp")
        campaign = committed_campaign(team)
        runs = [make_run(campaign, f"r{i}") for i in range(4)]
        for run in runs:
            add_points(run, _curve(50))
        with connection.cursor() as cursor:
            for table in ("campaigns_metricpoint", "campaigns_metricrollup"):
                cursor.execute(
                    "SELECT count(*) FROM pg_inherits WHERE inhparent = %s::regclass", [table]
                )
                assert cursor.fetchone()[0] == 16
                cursor.execute(
                    f"SELECT run_id, count(DISTINCT tableoid) FROM {table} GROUP BY run_id"
                )
                assert sorted(cursor.fetchall()) == sorted((run.pk, 1) for run in runs)
            cursor.execute(
                "SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid "
                "AND a.attnum = ANY(i.indkey) WHERE i.indrelid = 'campaigns_metricpoint'::regclass "
                "AND i.indisprimary"
            )
            assert {name for (name,) in cursor.fetchall()} == {"run_id", "key_id", "step", "seq"}


class RetentionKeepsTheCurves(TestCase):
    now: datetime
    team: Team
    old: Run
    recent: Run
    running: Run
    kept: Run

    @classmethod
    def setUpTestData(cls) -> None:
        cls.now = timezone.now()
        long_ago = cls.now - timedelta(days=40)
        cls.team = Team.objects.create(name="nlp", metric_retention_days=30)
        campaign = committed_campaign(cls.team)
        cls.old = make_run(campaign, "old")
        add_points(cls.old, _curve(3000), when=long_ago)
        add_points(cls.old, [("acc", 1, 0.5)], when=long_ago)
        cls.recent = make_run(campaign, "recent")
        add_points(cls.recent, _curve(300), when=cls.now - timedelta(days=2))
        cls.running = make_run(campaign, "running", status="running")
        add_points(cls.running, _curve(300), when=long_ago)
        forever = Team.objects.create(name="vision")
        cls.kept = make_run(committed_campaign(forever), "kept")
        add_points(cls.kept, _curve(300), when=long_ago)

    def test_old_points_of_finished_runs_go_and_their_summaries_and_rollups_stay(self) -> None:
        rollups = MetricRollup.objects.count()
        before = run_metrics.metric_series(self.old, "loss", 500)
        dropped = metric_store.drop_old_points(team_id=self.team.pk, now=self.now)
        assert dropped == 3001
        assert not MetricPoint.objects.filter(run=self.old).exists()
        assert MetricRollup.objects.count() == rollups
        for run in (self.recent, self.running, self.kept):
            assert MetricPoint.objects.filter(run=run).count() == 300
        # The same series as before, from the same rollups: the raw points were not read.
        after = run_metrics.metric_series(self.old, "loss", 500)
        assert after.count == before.count == 3000
        assert repr(after.points) == repr(before.points)
        assert run_metrics.metric_names(self.old) == [("acc", 1), ("loss", 3000)]
        assert metric_store.drop_old_points(team_id=self.team.pk, now=self.now) == 0

    def test_a_short_series_is_drawn_from_its_rollups_with_its_extremes_and_last_point(
        self,
    ) -> None:
        metric_store.drop_old_points(team_id=self.team.pk, now=self.now)
        series = run_metrics.metric_series(self.old, "acc", 500)
        assert (series.count, series.points) == (1, [(1, 0.5)])
        long = run_metrics.metric_series(self.old, "loss", 5000)  # more than it holds
        values = [v for _, v in long.points if not math.isnan(v)]
        assert long.count == 3000 and 0 < len(long.points) < 3000
        assert max(values) == 3.0 and long.points[-1] == (2999, 3.0 - 2999 / 3000)
        assert any(math.isnan(v) for _, v in long.points)  # the bucket's non-finite marker
        [(_, last)] = run_metrics.logged_at(self.old, "loss", long.points[-1:])
        assert last == MetricSummary.objects.get(run=self.old, name="loss").last_at
        assert run_metrics.history_page(self.old, "loss", limit=10) == ([], None)

    def test_the_last_points_mlflow_shows_come_from_the_summaries_once_dropped(self) -> None:
        metric_store.drop_old_points(team_id=self.team.pk, now=self.now)
        [acc, loss] = run_metrics.last_points([self.old.pk])[self.old.pk]
        assert (acc.name, acc.step, acc.as_float()) == ("acc", 1, 0.5)
        assert (loss.name, loss.step) == ("loss", 2999)

    def test_the_beat_task_drops_in_batches_until_nothing_is_left(self) -> None:
        assert drop_old_metric_points() == 3001
        assert drop_old_metric_points() == 0

    def test_a_retention_is_whole_days_at_least_one(self) -> None:
        from django.core.exceptions import ValidationError

        with self.assertRaises(ValidationError) as refused:
            metric_store.set_metric_retention(team=self.team, days=0)
        assert "metric_retention_days" in refused.exception.message_dict
        metric_store.set_metric_retention(team=self.team, days=None)
        assert metric_store.drop_old_points(team_id=self.team.pk, now=self.now) == 0

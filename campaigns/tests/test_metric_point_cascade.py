"""The points' run foreign key has no database constraint (docs/metric_store.md §5, "Ingest
cost"): deleting a run or its campaign still removes its points, summaries and rollups through
the ORM's cascade, and the points go in one fast delete by run, never loaded row by row nor
deleted by key."""

from __future__ import annotations

import unittest

from django.db import connection
from django.test import TestCase
from django.test.utils import CaptureQueriesContext

from campaigns.models import Campaign, MetricPoint, MetricRollup, MetricSummary, Run, Team
from campaigns.tests.factories import add_points, make_campaign, make_run

POSTGRES = connection.vendor == "postgresql"


def _curve(name: str, n: int) -> list[tuple[str, int, float]]:
    return [(name, step, 1.0 / (step + 1)) for step in range(n)]


def _point_statements(queries: list[dict[str, str]]) -> list[str]:
    return [q["sql"] for q in queries if "campaigns_metricpoint" in q["sql"]]


class DeletingARunRemovesItsPoints(TestCase):
    team: Team
    campaign: Campaign
    doomed: Run
    other: Run

    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.campaign = make_campaign(cls.team)
        cls.doomed = make_run(cls.campaign, "doomed")
        cls.other = make_run(cls.campaign, "kept")
        add_points(cls.doomed, _curve("loss", 300) + _curve("acc", 300))
        add_points(cls.other, _curve("loss", 40))

    def test_a_run_delete_removes_its_points_summaries_and_rollups_and_no_other_runs(
        self,
    ) -> None:
        self.doomed.delete()
        assert not MetricPoint.objects.filter(run_id=self.doomed.pk).exists()
        assert not MetricSummary.objects.filter(run_id=self.doomed.pk).exists()
        assert not MetricRollup.objects.filter(run_id=self.doomed.pk).exists()
        assert MetricPoint.objects.filter(run=self.other).count() == 40
        assert MetricSummary.objects.filter(run=self.other).count() == 1

    def test_the_points_go_in_fast_deletes_without_being_read(self) -> None:
        with CaptureQueriesContext(connection) as queries:
            self.doomed.delete()
        statements = _point_statements(queries.captured_queries)
        # One delete, by run: never a SELECT of the points whatever their number, and no
        # delete by the summaries' keys (no index leads with the key: every partition read).
        assert len(statements) == 1, statements
        assert statements[0].startswith("DELETE FROM"), statements
        assert '"run_id" IN' in statements[0], statements

    def test_a_campaign_delete_removes_its_runs_points(self) -> None:
        # A draft: a committed campaign is protected by its baseline and ledger entries.
        Campaign.objects.filter(pk=self.campaign.pk).delete()
        assert not Run.objects.filter(pk__in=[self.doomed.pk, self.other.pk]).exists()
        assert not MetricPoint.objects.filter(run_id__in=[self.doomed.pk, self.other.pk]).exists()
        assert not MetricRollup.objects.filter(run_id__in=[self.doomed.pk, self.other.pk]).exists()


@unittest.skipUnless(POSTGRES, "needs PostgreSQL: set DATABASE_URL")
class ThePointsCarryNoForeignKeyConstraint(TestCase):
    def test_no_foreign_key_is_checked_per_inserted_point(self) -> None:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND conrelid IN "
                "(SELECT 'campaigns_metricpoint'::regclass UNION ALL SELECT inhrelid "
                "FROM pg_inherits WHERE inhparent = 'campaigns_metricpoint'::regclass)"
            )
            assert cursor.fetchone()[0] == 0


class ATeamWithCampaignsIsNotDeleted(TestCase):
    def test_a_team_delete_is_refused_while_it_has_campaigns_and_its_points_stay(self) -> None:
        # Campaign.team is PROTECT: a team's points only ever go with a run or a campaign.
        from django.db.models import ProtectedError

        from campaigns.services.teams import delete_team

        team = Team.objects.create(name="vision")
        run = make_run(make_campaign(team), "r1")
        add_points(run, _curve("loss", 50))
        with self.assertRaises(ProtectedError):
            delete_team(team=team)
        assert MetricPoint.objects.filter(run_id=run.pk).count() == 50

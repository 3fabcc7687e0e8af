"""Many campaigns' timelines read at once (campaigns/selectors/timeline.py `timeline_inputs_of`,
docs/domain.md §20: the team's calibration reads every committed campaign's timeline): the same
inputs as each campaign's own read, in a number of queries that does not grow with them."""

from __future__ import annotations

from decimal import Decimal

from django.db import connection
from django.test import TestCase
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from campaigns.domain.timeline import build
from campaigns.models import Campaign, Stage, Team
from campaigns.selectors.timeline import timeline_inputs, timeline_inputs_of
from campaigns.services.plans import commit_plan
from campaigns.tests.factories import committed_campaign, make_plannable, make_run


class TimelinesReadAtOnce(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.campaigns = [committed_campaign(cls.team, title=f"c{n}") for n in range(3)]
        first = cls.campaigns[0]
        Stage.objects.filter(campaign=first).update(observed_hours=Decimal("3"))
        make_run(first, "a-1", variant=first.items.first(), observed_hours="4")
        make_run(first, "a-2", variant=first.items.first(), status="running")
        cls.campaigns.append(make_plannable(cls.team, title="a draft"))

    def test_each_campaigns_inputs_are_those_it_reads_alone(self) -> None:
        now = timezone.now()
        together = timeline_inputs_of(self.campaigns, now=now)
        for campaign in self.campaigns:
            self.assertEqual(together[campaign.pk], timeline_inputs(campaign, now=now))

    def test_summed_runs_give_each_stage_the_same_observed_figure_and_state(self) -> None:
        first = self.campaigns[0]
        item = first.items.first()
        make_run(first, "a-3", variant=item, status="failed", observed_hours="1.5")
        make_run(first, "a-4", variant=item, status="stopped")  # ended with no hours
        resumed = make_run(first, "a-5", variant=item, status="failed")
        type(resumed).objects.filter(pk=resumed.pk).update(prior_hours=Decimal("2.25"))
        make_run(first, "loose", kind="inference", observed_hours="0.5")  # tied to no item
        now = timezone.now()
        each = build(timeline_inputs_of(self.campaigns, now=now)[first.pk])
        summed = build(timeline_inputs_of(self.campaigns, now=now, summed=True)[first.pk])
        self.assertEqual(summed.observed.total, each.observed.total)
        self.assertEqual(summed.observed.unattributed, each.observed.unattributed)
        for a, b in zip(each.stages, summed.stages, strict=True):
            self.assertEqual(
                (a.state, a.observed.hours, a.observed.source, a.hours),
                (b.state, b.observed.hours, b.observed.source, b.hours),
            )

    def test_more_campaigns_take_no_more_queries(self) -> None:
        with CaptureQueriesContext(connection) as few:
            timeline_inputs_of(self.campaigns[:1])
        more = list(Campaign.objects.filter(team=self.team))
        for n in range(3):
            campaign = make_plannable(self.team, title=f"more {n}")
            commit_plan(campaign=campaign)
            more.append(campaign)
        with CaptureQueriesContext(connection) as many:
            timeline_inputs_of(more)
        self.assertEqual(len(many.captured_queries), len(few.captured_queries))
        self.assertLessEqual(len(many.captured_queries), 7)

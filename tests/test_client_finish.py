"""Finishing a run from the client, against Campaign Desk on a live server: the README's pilot
(`elapsed / 3600` hours) is recorded as sent, and a refused finish leaves the run as it was."""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

from django.test import LiveServerTestCase

from campaign_desk_client import ApiError
from campaign_desk_client.wire import MAX_OBSERVED_HOURS
from campaigns.api.fields import HOURS_MAX
from campaigns.models import MetricPoint, Run, Team
from campaigns.services.keys import issue_ingest_key
from campaigns.services.plans import commit_plan
from campaigns.tests.factories import make_plannable, make_user
from tests.test_client import quick_desk


class FinishingARunOnALiveServer(LiveServerTestCase):
    def setUp(self) -> None:
        team = Team.objects.create(name="nlp")
        owner = make_user("olga", team=team, role="owner")
        self.campaign = make_plannable(team)
        commit_plan(campaign=self.campaign, acting_user=owner)
        _, raw = issue_ingest_key(campaign=self.campaign, acting_user=owner)
        self.desk = quick_desk(self.live_server_url, raw)

    def start(self) -> Any:
        return self.desk.run(campaign=self.campaign.pk, run_id="pilot-1", kind="pilot")

    def stored(self) -> Run:
        return Run.objects.get(run_id="pilot-1")

    def test_the_readme_pilot_is_completed_with_its_hours_rounded_to_the_hundredth(self) -> None:
        elapsed = 2800.0  # seconds, as time.monotonic() differences come
        with self.start() as run:
            run.log(1, loss=2.0)
            run.finish(observed_hours=elapsed / 3600)  # 0.7777777777777778
        stored = self.stored()
        self.assertEqual((stored.status, stored.observed_hours), ("completed", Decimal("0.78")))
        self.assertEqual(MetricPoint.objects.filter(run=stored).count(), 1)

    def test_hours_the_client_cannot_send_leave_the_run_running_not_failed(self) -> None:
        for hours in (math.nan, -1.0, MAX_OBSERVED_HOURS + 1, "soon"):
            with self.subTest(hours=hours), self.assertRaises(ValueError), self.start() as run:
                run.log(1, loss=2.0)
                run.finish(observed_hours=hours)  # type: ignore[arg-type]
        stored = self.stored()
        self.assertEqual((stored.status, stored.observed_hours), ("running", None))
        # The points logged before each refused finish are still sent.
        self.assertEqual(MetricPoint.objects.filter(run=stored).count(), 4)

    def test_a_finish_the_server_refuses_leaves_the_run_as_it_was(self) -> None:
        # Within the client's bounds, but a decimal string longer than the server takes.
        hours = Decimal("0." + "7" * 100)
        with self.assertRaises(ApiError) as refused, self.start() as run:
            run.finish(observed_hours=hours)
        self.assertEqual(refused.exception.status, 400)
        self.assertIn("observed_hours", refused.exception.body)
        self.assertEqual(self.stored().status, "running")
        # Fixed, the same run finishes as meant.
        self.start().finish(observed_hours=Decimal("0.78"))
        self.assertEqual(self.stored().observed_hours, Decimal("0.78"))

    def test_the_client_and_the_server_agree_on_the_maximum(self) -> None:
        self.assertEqual(MAX_OBSERVED_HOURS, HOURS_MAX)
        self.start().finish(observed_hours=MAX_OBSERVED_HOURS)
        self.assertEqual(self.stored().observed_hours, HOURS_MAX)

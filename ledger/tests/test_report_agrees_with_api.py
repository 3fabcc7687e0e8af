"""The closing report tells the truth (docs/domain.md): fates the API agrees with, resume
instructions only from valid checkpoints, minutes with a time zone, amendments old → new, the
pilot's measurement beside the estimate it replaced."""

from __future__ import annotations

import re
from decimal import Decimal

from django.test import TestCase

from campaigns.models import Checkpoint, Run, Team, ThroughputSample
from campaigns.services.items import amend_item
from campaigns.tests.factories import as_user, committed_campaign, make_user
from ledger.rendering.closing_report import render
from ledger.selectors.closing_report import collect


class ReportTruth(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.owner = make_user("olga", team=cls.team, role="owner")
        cls.campaign = committed_campaign(cls.team, cls.owner, lots=0, automatic_rules=True)
        cls.baseline = cls.campaign.items.get(name="baseline")
        cls.variant = cls.campaign.items.get(name="variant A")
        # The config as planned before commit (written here without an amendment).
        type(cls.baseline).objects.filter(pk=cls.baseline.pk).update(
            config={"assumed_tokens_per_second": 30000, "tokens": 1_000_000_000}
        )
        pilot = Run.objects.create(
            team=cls.team,
            campaign=cls.campaign,
            run_id="base-pilot",
            variant=cls.baseline,
            kind="pilot",
            status="completed",
            config_digest="-",
        )
        ThroughputSample.objects.create(run=pilot, tokens_per_second=41_500, gpus=8)
        stopped = Run.objects.create(
            team=cls.team,
            campaign=cls.campaign,
            run_id="varA-1",
            variant=cls.variant,
            kind="full",
            status="stopped",
            stop_reason="loss is NaN at step 7",
            stop_step=7,
            config_digest="-",
        )
        Checkpoint.objects.create(
            run=stopped,
            step=5,
            components=["model", "optimizer", "progress"],
            location="/tmp/ckpt/varA-1/5",
            resume_verified=True,
        )
        amend_item(
            item=cls.variant,
            acting_user=cls.owner,
            reason="the pilot was faster",
            planned_hours=Decimal("8"),
        )

    def setUp(self) -> None:
        self.data = collect(self.campaign)
        self.items = {i["name"]: i for t in self.data["items"]["tiers"] for i in t["items"]}

    def test_an_item_whose_only_runs_are_pilots_is_planned_in_the_report_and_the_api(self) -> None:
        self.assertEqual(self.items["baseline"]["fate"], "planned")
        self.assertIn("only pilots ran", self.items["baseline"]["detail"])
        api = as_user(self.owner).get(f"/api/v1/campaigns/{self.campaign.pk}/variants/")
        by_name = {i["name"]: i for i in api.json()["results"]}
        for name in ("baseline", "variant A"):
            self.assertEqual(by_name[name]["fate"], self.items[name]["fate"], name)
        self.assertEqual(by_name["baseline"]["status"], "planned")
        self.assertEqual(by_name["variant A"]["status"], "stopped")

    def test_it_never_tells_to_resume_from_a_stopped_runs_checkpoint_under_tmp(self) -> None:
        resume = self.data["reload_instructions"][-1]
        self.assertNotIn("Resume from", resume)
        self.assertIn("no valid resume point", resume)
        self.assertIn("stopped by a rule", resume)
        self.assertIn("/tmp", resume)
        self.assertFalse(self.data["checkpoints"]["usable_resume"])
        for fmt in ("markdown", "html"):
            self.assertNotIn("Resume from /tmp", render(self.data, fmt))

    def test_timestamps_are_to_the_minute_with_the_time_zone(self) -> None:
        minute = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d UTC$")
        self.assertRegex(self.data["generated_at"], minute)
        self.assertRegex(self.data["campaign"]["committed_at"], minute)
        self.assertRegex(self.data["amendments"][0]["made_at"], minute)

    def test_amendments_show_old_and_new_values(self) -> None:
        texts = [c["text"] for c in self.data["amendments"][0]["changes"]]
        self.assertIn("planned_hours: 12.00 → 8", texts)
        self.assertIn("planned_hours: 12.00 → 8", render(self.data, "markdown"))

    def test_the_pilot_measurement_and_the_assumption_it_replaced_are_shown(self) -> None:
        (pilot,) = self.data["pilots"]
        self.assertEqual(pilot["item"], "baseline")
        self.assertEqual(pilot["measured"], "41,500 tokens/s on 8 GPU(s)")
        self.assertIn("assumed 30,000 tokens/s", pilot["replaced"])
        self.assertIn("41,500 tokens/s", render(self.data, "html"))

    def test_the_html_report_draws_the_calendar_as_the_campaign_page_does(self) -> None:
        html = render(self.data, "html")
        self.assertIn('id="calendar-gantt"', html)
        self.assertRegex(html, r'class="stage \w+ critical"')


class ReportGanttDrawsTheReservedLots(TestCase):
    """The report's calendar is the campaign page's, reserved lots included (issue 9): a lot's
    bar is as long as the lot lasts, taken from the lot's row when the baseline froze none."""

    def test_the_reserved_lot_is_a_bar_under_the_stages(self) -> None:
        from campaigns.tests.factories import committed_campaign as with_lot

        campaign = with_lot(Team.objects.create(name="lots"))
        data = collect(campaign)
        self.assertEqual(data["plan"]["lots"][0]["duration_hours"], "72.00")
        html = render(data, "html")
        self.assertIn('text-anchor="end">reserved lots</text>', html)

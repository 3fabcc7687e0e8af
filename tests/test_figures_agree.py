"""One figure for each quantity (issue 18, item 1; docs/domain.md §8.5): the work hours, the
GPU-hours, the calendar length and the lots' hours are the same on the campaign page, in the
API and in the closing report, and each is computed by hand here.

The plan: baseline 10 h on 1 GPU, variant A 12 h on 2 GPUs, variant B 4 h cut by a decision;
stages: 2 h human preparation, then training 22 h on gpu-a, then a 3 h analysis; one 3-day lot
(72 h) reserved twice. By hand: work 10 + 12 = 22 h; GPU-hours 10 × 1 + 12 × 2 = 34;
calendar 2 + 22 + 3 = 27 h; lots 2 × 72 = 144 h; window 72 h, 45 h to spare."""

from __future__ import annotations

import re
from decimal import Decimal

from django.test import TestCase
from django.urls import reverse

from campaigns.models import PlannedItem, Stage, Team
from campaigns.services.plans import commit_plan
from campaigns.tests.factories import as_user, celery_eager, make_plannable, make_user
from catalog.models import RentalPlan
from ledger.models import Report
from ledger.services import request_report

BY_HAND = {
    "work_hours": "22.00",
    "gpu_hours": "34.00",
    "calendar_hours": "27.00",
    "lot_hours": "144.00",
    "window_hours": "72.00",
    "observed_hours": None,  # nothing observed yet
}


class TheFiguresAgree(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.owner = make_user("olga", team=cls.team, role="owner")
        cls.campaign = c = make_plannable(cls.team)
        plan = RentalPlan.objects.get(provider="IteraGPU", name="RTX 4090, 3 days")
        c.lots.create(plan=plan, quantity=2)
        PlannedItem.objects.filter(campaign=c, name="variant A").update(gpus=2)
        PlannedItem.objects.create(
            campaign=c,
            name="variant B",
            role="variant",
            tier="exploratory",
            planned_hours=Decimal("4"),
            status="cut",
        )
        train = Stage.objects.get(campaign=c)
        prep = Stage.objects.create(
            campaign=c, name="prep", kind="human_prep", machine=False, planned_hours=Decimal("2")
        )
        train.depends_on.set([prep])
        after = Stage.objects.create(
            campaign=c,
            name="read the results",
            kind="human_prep",
            machine=False,
            planned_hours=Decimal("3"),
        )
        after.depends_on.set([train])
        commit_plan(campaign=c)

    def test_page_api_and_report_show_the_figures_computed_by_hand(self) -> None:
        self.client.force_login(self.owner)
        page = self.client.get(reverse("admin:campaigns_campaign_change", args=[self.campaign.pk]))
        text = page.content.decode()
        self.assertIn("The calendar takes 27 h of a 72 h window: 45 h to spare", text)
        figures = re.search(r'<p id="summary-figures".*?</p>', text, re.S)
        assert figures is not None
        shown = re.findall(r"<strong>([\d.]+) h</strong>", figures.group(0))
        self.assertEqual(shown, ["22", "34", "27", "144", "72"])

        api = as_user(self.owner).get(f"/api/v1/campaigns/{self.campaign.pk}/").json()
        self.assertEqual(api["plan_figures"], BY_HAND)

        with celery_eager(), self.captureOnCommitCallbacks(execute=True):
            report = request_report(campaign=self.campaign, acting_user=self.owner)
        report = Report.objects.get(pk=report.pk)
        data = as_user(self.owner).get(f"/api/v1/reports/{report.pk}/json/").json()
        self.assertEqual({k: data["plan_figures"][k] for k in BY_HAND}, BY_HAND)
        for rendering in ("markdown", "html"):
            body = as_user(self.owner).get(f"/api/v1/reports/{report.pk}/{rendering}/")
            self.assertContains(body, "GPU-hours (work hours × GPUs)")
            self.assertContains(body, "Lots&#x27; hours" if rendering == "html" else "Lots' hours")

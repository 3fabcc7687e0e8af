"""The forecast, the lot advice and the hardware options name their hours as the plan figures
do (issue 18: one plan showed 43.5 h, 42.5 h and 39.5 GPU-hours, none saying what it was;
docs/domain.md §8.5).

The issue's plan, rebuilt: baseline 10 h, LoRA r8 14.5 h and LoRA r16 15 h, each on one RTX
4090; the stages run one after another on gpu-a: setup 3 h (machine time tied to no item), the
three trainings, then a 1 h human analysis; a 7-day lot (168 h) in a 72 h window; no pilot.
By hand: work hours 10 + 14.5 + 15 = 39.5 h; GPU-hours 39.5 (one GPU each); calendar length
3 + 39.5 + 1 = 43.5 h; machine time the lots must hold 3 + 39.5 = 42.5 h; lots' hours 168 h.
"""

from __future__ import annotations

import re
from decimal import Decimal

from django.test import TestCase
from django.urls import reverse

from campaigns.models import Campaign, PlannedItem, Stage, StopRule, Team
from campaigns.tests.factories import as_user, celery_eager, make_campaign, make_user
from catalog.models import RentalPlan


def _stage(
    c: Campaign, name: str, kind: str, hours: str, after: Stage | None, **kw: object
) -> Stage:
    stage = Stage.objects.create(
        campaign=c, name=name, kind=kind, planned_hours=Decimal(hours), **kw
    )
    if after is not None:
        stage.depends_on.set([after])
    return stage


class ThePanelsNameTheirFigures(TestCase):
    def setUp(self) -> None:
        team = Team.objects.create(name="nlp")
        self.owner = make_user("olga", team=team, role="owner")
        with celery_eager(), self.captureOnCommitCallbacks(execute=True):
            self.campaign = c = make_campaign(team, budget=Decimal("200.00"))
            items = {}
            for name, role, tier, hours in [
                ("baseline", "baseline", "mandatory", "10"),
                ("LoRA r8", "variant", "useful", "14.5"),
                ("LoRA r16", "variant", "useful", "15"),
            ]:
                items[name] = PlannedItem.objects.create(
                    campaign=c,
                    name=name,
                    role=role,
                    tier=tier,
                    planned_hours=Decimal(hours),
                    gpu="RTX 4090",
                )
            StopRule.objects.create(campaign=c, kind="non_finite_loss", metric="loss")
            machine = {"machine": True, "resource": "gpu-a"}
            last = _stage(c, "setup", "setup", "3", None, **machine)
            for name, item in items.items():
                last = _stage(
                    c,
                    f"train {name}",
                    "training",
                    str(item.planned_hours),
                    last,
                    variant=item,
                    **machine,
                )
            _stage(c, "analysis", "analysis", "1", last, machine=False)
            plan = RentalPlan.objects.get(provider="IteraGPU", name="RTX 4090, 7 days")
            c.lots.create(plan=plan, quantity=1)

    def test_each_panel_says_which_figure_it_shows_and_they_agree(self) -> None:
        api = as_user(self.owner)
        figures = api.get(f"/api/v1/campaigns/{self.campaign.pk}/").json()["plan_figures"]
        self.assertEqual(
            {k: figures[k] for k in ("work_hours", "gpu_hours", "calendar_hours", "lot_hours")},
            {
                "work_hours": "39.50",
                "gpu_hours": "39.50",
                "calendar_hours": "43.50",
                "lot_hours": "168.00",
            },
        )

        forecast = api.get(f"/api/v1/campaigns/{self.campaign.pk}/forecast/").json()
        # No pilot: the forecast's figures are the plan's, under the same names.
        self.assertEqual(
            forecast["figures"],
            {
                "work_hours": 39.5,
                "gpu_hours": 39.5,
                "calendar_hours": 43.5,
                "machine_hours": 42.5,
                "untied_machine_hours": 3.0,
            },
        )
        self.assertEqual(forecast["forecast_hours"], float(figures["calendar_hours"]))
        self.assertEqual(
            forecast["advice"][0],
            "The calendar takes 43.5 h of a 72 h window: 28.5 h to spare.",
        )
        self.assertIn(
            "Forecast figures: work hours 39.5 h, GPU-hours 39.5, calendar length 43.5 h; the "
            "lots must hold 42.5 h of machine time (39.5 h on the items' stages, 3 h on stages "
            "tied to no item).",
            forecast["advice"],
        )
        # The lot advice counts machine time, and says so.
        explanation = " ".join(forecast["lots"]["explanation"])
        self.assertIn("for 42.5 h of machine time", explanation)
        self.assertNotIn("h of work", explanation)
        self.assertNotIn("The calendar of", explanation)

        self.client.force_login(self.owner)
        page = self.client.get(reverse("admin:campaigns_campaign_change", args=[self.campaign.pk]))
        text = page.content.decode()
        line = re.search(r'<p id="summary-figures".*?</p>', text, re.S)
        assert line is not None
        self.assertEqual(
            re.findall(r"<strong>([\d.]+) h</strong>", line.group(0)),
            ["39.5", "39.5", "43.5", "168", "72"],
        )
        panel = re.search(r'<p id="forecast-figures".*?</p>', text, re.S)
        assert panel is not None
        self.assertEqual(
            re.findall(r"<strong>([\d.]+)(?: h)?</strong>", panel.group(0)),
            ["39.5", "39.5", "43.5", "42.5"],
        )
        self.assertIn("3 h of them tied to no item", panel.group(0))
        self.assertEqual(
            forecast["figures"]["machine_hours"] - forecast["figures"]["untied_machine_hours"],
            float(figures["work_hours"]),
        )
        self.assertIn("calendar length", panel.group(0))
        self.assertIn("machine time the lots must hold", panel.group(0))
        # The hardware options rank the items' work: the plan's work hours and GPU-hours.
        basis = re.search(r'<p id="hardware-basis".*?</p>', text, re.S)
        assert basis is not None
        self.assertIn("work hours <strong>39.5 h</strong>", basis.group(0))
        self.assertIn("GPU-hours (work hours × GPUs) <strong>39.5</strong>", basis.group(0))
        options = re.search(r'<ol id="hardware-options".*?</ol>', text, re.S)
        assert options is not None
        self.assertIn("39.5 GPU-hours, 39.5 work hours on 1 GPU", options.group(0))
        # The rent covers the setup too, and the window is the whole calendar's.
        self.assertIn("covers 3 h of the calendar's other stages", options.group(0))
        self.assertIn("fits the window: the calendar takes 43.5 h on it", options.group(0))
        self.assertNotIn("end to end", options.group(0))

"""Observed hours have one source (issue 18; docs/domain.md §8.6): the runs on a stage's item.

The plan (make_plannable + two stages): "train" (training, the baseline's), "train A"
(training, variant A's), "setup" (human, no item). What happened:

- the baseline's full run completed in 9.55 h: its stage shows 9.55 h without anyone typing it;
- variant A's full run failed after 4 h, was resumed and completed at 12 h in all (its segment
  included): the runs' figure is 12 h; the planner types 13 h, is asked why once, says why, and
  13 h stands with the reason, the 12 h shown beside it;
- a pilot of variant A took 0.5 h and no pilot stage stands for it: unattributed;
- "setup" has no run: its 2.5 h are typed.

By hand: 9.55 + 13 + 2.5 + 0.5 = 25.55 h observed. The forecast, the campaign page, the API's
`plan_figures` and stage fields, and the closing report all say 25.55 h, and each stage's
figure the same everywhere.
"""

from __future__ import annotations

import re
from decimal import Decimal

from django.core.exceptions import ValidationError
from django.test import TestCase
from django.urls import reverse

from campaigns.models import PlannedItem, Stage, Team
from campaigns.services import run_lifecycle
from campaigns.services.observed_hours import record_observed_hours
from campaigns.services.plans import commit_plan
from campaigns.services.run_lifecycle import resume_run
from campaigns.tests.factories import as_user, celery_eager, make_plannable, make_run, make_user
from estimates.selectors.forecast_inputs import compute_forecast
from ledger.models import Report
from ledger.services import request_report

TOTAL = "25.55"


class ObservedHoursHaveOneSource(TestCase):
    def setUp(self) -> None:
        team = Team.objects.create(name="nlp")
        self.owner = make_user("olga", team=team, role="owner")
        self.campaign = c = make_plannable(team)
        self.baseline = PlannedItem.objects.get(campaign=c, name="baseline")
        self.variant = PlannedItem.objects.get(campaign=c, name="variant A")
        self.train = Stage.objects.get(campaign=c, name="train")
        self.train.variant = self.baseline
        self.train.planned_hours = Decimal("10")
        self.train.save()
        self.train_a = Stage.objects.create(
            campaign=c,
            name="train A",
            kind="training",
            machine=True,
            resource="gpu-a",
            variant=self.variant,
            planned_hours=Decimal("12"),
        )
        self.setup_stage = Stage.objects.create(
            campaign=c, name="setup", kind="setup", machine=False, planned_hours=Decimal("2")
        )
        with celery_eager(), self.captureOnCommitCallbacks(execute=True):
            commit_plan(campaign=c, acting_user=self.owner)
            make_run(c, "base-1", variant=self.baseline, observed_hours="9.55")
            run = make_run(c, "a-1", variant=self.variant, status="running")
            run_lifecycle.finish_run(run=run, status="failed", observed_hours=Decimal("4"))
            run = resume_run(run=run)
            run_lifecycle.finish_run(run=run, status="completed", observed_hours=Decimal("12"))
            make_run(c, "a-pilot", variant=self.variant, kind="pilot", observed_hours="0.5")

    def record(self, stage: Stage, hours: str, **kw: str) -> None:
        with celery_eager(), self.captureOnCommitCallbacks(execute=True):
            record_observed_hours(
                stage=stage, acting_user=self.owner, observed_hours=Decimal(hours), **kw
            )

    def test_the_forecast_page_api_and_report_show_one_figure(self) -> None:
        # The runs give the baseline's stage its hours: nobody types them.
        with self.assertRaises(ValidationError) as refused:
            self.record(self.train_a, "13", deviation_note="the resume cost an hour")
        self.assertIn("observed_reason", refused.exception.message_dict)
        self.assertIn("12", refused.exception.message_dict["observed_reason"][0])
        self.record(
            self.train_a,
            "13",
            deviation_note="the resume cost an hour",
            observed_reason="the runs miss the hour spent restoring the checkpoint",
        )
        # Asked once: the same figure again needs no second reason.
        self.record(self.train_a, "13", deviation_note="the resume cost an hour")
        self.record(self.setup_stage, "2.5", deviation_note="drivers")

        # The forecast.
        forecast = compute_forecast(self.campaign).as_json()
        self.assertEqual(forecast["totals"]["observed_hours"], float(TOTAL))
        by_item = {i["name"]: i["observed_hours"] for i in forecast["items"]}
        self.assertEqual(by_item, {"baseline": 9.55, "variant A": 13.5})
        api = as_user(self.owner)
        persisted = api.get(f"/api/v1/campaigns/{self.campaign.pk}/forecast/").json()
        self.assertEqual(persisted["totals"]["observed_hours"], float(TOTAL))

        # The API: the plan figures and each stage.
        detail = api.get(f"/api/v1/campaigns/{self.campaign.pk}/").json()
        self.assertEqual(detail["plan_figures"]["observed_hours"], TOTAL)
        stages = api.get(f"/api/v1/campaigns/{self.campaign.pk}/stages/").json()
        rows = stages["results"] if isinstance(stages, dict) else stages
        shown = {
            s["name"]: (s["observed_hours"], s["observed_source"], s["runs_observed_hours"])
            for s in rows
        }
        self.assertEqual(
            shown,
            {
                "train": ("9.55", "runs", "9.55"),
                "train A": ("13.00", "recorded, differs from the runs", "12.00"),
                "setup": ("2.50", "recorded", None),
            },
        )
        reason = next(s["observed_reason"] for s in rows if s["name"] == "train A")
        self.assertEqual(reason, "the runs miss the hour spent restoring the checkpoint")

        # The campaign page: the figure among the plan's, the runs' hours beside the typed ones.
        self.client.force_login(self.owner)
        page = self.client.get(reverse("admin:campaigns_campaign_change", args=[self.campaign.pk]))
        text = page.content.decode()
        figures = re.search(r'<p id="summary-figures".*?</p>', text, re.S)
        assert figures is not None
        self.assertIn(
            f"Observed hours (from the runs, typed where none): <strong>{TOTAL} h", figures.group(0)
        )
        self.assertIn("9.55 h (1 run)", text)
        self.assertIn("12 h (1 run); typed 13 h stands", text)
        self.assertIn("no run: type it", text)
        forecast_total = re.search(r'<tr id="forecast-totals".*?</tr>', text, re.S)
        assert forecast_total is not None
        self.assertIn(f"<td>{TOTAL}</td>", forecast_total.group(0))

        # The closing report.
        with celery_eager(), self.captureOnCommitCallbacks(execute=True):
            report = request_report(campaign=self.campaign, acting_user=self.owner)
        report = Report.objects.get(pk=report.pk)
        data = api.get(f"/api/v1/reports/{report.pk}/json/").json()
        self.assertEqual(data["hours"]["observed_hours"], TOTAL)
        self.assertEqual(data["plan_figures"]["observed_hours"], TOTAL)
        in_report = {s["name"]: s["observed_hours"] for s in data["hours"]["stages"]}
        self.assertEqual(in_report, {"train": "9.55", "train A": "13.00", "setup": "2.50"})
        self.assertEqual(data["hours"]["unattributed_run_hours"], "0.50")
        html = api.get(f"/api/v1/reports/{report.pk}/html/").content.decode()
        self.assertIn(f"<strong>{TOTAL} h</strong>", html)
        self.assertIn("the runs: 12.00 h: the runs miss the hour", html)

    def test_the_campaign_page_asks_for_the_reason_once_and_stores_it(self) -> None:
        from tests.adminforms import form_data

        self.client.force_login(self.owner)
        url = reverse("admin:campaigns_campaign_change", args=[self.campaign.pk])
        data = form_data(self.client.get(url).content.decode(), "campaign_form")
        row = next(k[: -len("-id")] for k, v in data.items() if k.startswith("stages-")
                   and k.endswith("-id") and v == str(self.train_a.pk))  # fmt: skip
        data[f"{row}-observed_hours"] = "13"
        data[f"{row}-deviation_note"] = "the resume cost an hour"
        refused = self.client.post(url, data)
        self.assertEqual(refused.status_code, 200, "saved without the reason")
        self.assertContains(refused, "the runs on this stage&#x27;s item took 12.00 h")
        self.train_a.refresh_from_db()
        self.assertIsNone(self.train_a.observed_hours)  # nothing stored on refusal
        data[f"{row}-observed_reason"] = "the runs miss the restore"
        with celery_eager(), self.captureOnCommitCallbacks(execute=True):
            saved = self.client.post(url, data)
        self.assertEqual(saved.status_code, 302)
        self.train_a.refresh_from_db()
        self.assertEqual(
            (self.train_a.observed_hours, self.train_a.observed_reason),
            (Decimal("13.00"), "the runs miss the restore"),
        )

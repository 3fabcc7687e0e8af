"""Every page of a campaign whose metrics hold extremes answers without a 5xx (issue 18): a loss
that diverged to 7.8e24, a constant learning rate, a one-point metric and a NaN loss that
stopped a run. The admin's campaign, run and compare pages, the API's campaign, forecast,
hardware options, ledger, run and metric answers, and the closing report in each rendering."""

from __future__ import annotations

import json

from django.test import TestCase
from django.urls import reverse

from campaigns.models import PlannedItem, Run, Team
from campaigns.tests.factories import as_user as client_for
from campaigns.tests.factories import celery_eager, committed_campaign, ingest_client, make_user
from ledger.models import Report
from ledger.services import request_report


class PagesOfACampaignWithExtremeMetrics(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.owner = make_user("olga", team=cls.team, role="owner")
        cls.campaign = committed_campaign(cls.team)
        cls.baseline = PlannedItem.objects.get(campaign=cls.campaign, name="baseline")

    def setUp(self) -> None:
        self.ingest = ingest_client(self.campaign)
        self.client.force_login(self.owner)
        self.api = client_for(self.owner)
        self.log("diverged", [("loss", 10, 2.3), ("loss", 20, 7.8e24), ("acc", 50, 0.5)])
        for step in range(0, 100, 10):
            self.log("diverged", [("lr", step, 2e-4)])
        self.log("nan", [("loss", 10, 2.3), ("loss", 20, float("nan"))])
        self.log("huge-constant", [("loss", 10, 7.8e24), ("loss", 20, 7.8e24)])

    def log(self, run_id: str, points: list[tuple[str, int, float]]) -> None:
        opened = self.ingest.post(
            f"/api/v1/campaigns/{self.campaign.pk}/runs/",
            {"run_id": run_id, "variant": self.baseline.pk, "kind": "full", "config": {}},
            format="json",
            HTTP_IDEMPOTENCY_KEY=f"open-{run_id}",
        )
        self.assertIn(opened.status_code, (200, 201), opened.content)
        body = json.dumps({"points": [{"name": n, "step": s, "value": v} for n, s, v in points]})
        answer = self.ingest.post(
            f"/api/v1/runs/{run_id}/metrics/",
            body,
            content_type="application/json",
            HTTP_IDEMPOTENCY_KEY=f"m-{run_id}-{points[0][1]}-{points[0][0]}-{len(points)}",
        )
        self.assertIn(answer.status_code, (201, 409), answer.content)

    def assert_answers(self, client, url: str, *, status: int = 200) -> None:  # type: ignore[no-untyped-def]
        answer = client.get(url)
        self.assertEqual(answer.status_code, status, f"{url}: {answer.status_code}")
        self.assertNotIn(b"ZeroDivisionError", answer.content)

    def test_the_admin_pages(self) -> None:
        pk = self.campaign.pk
        self.assert_answers(self.client, reverse("admin:campaigns_campaign_change", args=[pk]))
        compare = reverse("admin:campaigns_campaign_compare", args=[pk])
        for metric in ("loss", "lr", "acc"):
            self.assert_answers(self.client, f"{compare}?metric={metric}")
        self.assert_answers(self.client, f"{compare}?metric=missing", status=404)
        for run in Run.objects.filter(campaign=self.campaign):
            self.assert_answers(self.client, reverse("admin:campaigns_run_change", args=[run.pk]))
        self.assert_answers(self.client, reverse("admin:campaigns_run_changelist"))
        self.assert_answers(self.client, reverse("admin:campaigns_campaign_changelist"))

    def test_the_api_answers(self) -> None:
        pk = self.campaign.pk
        for path in (
            f"/api/v1/campaigns/{pk}/",
            f"/api/v1/campaigns/{pk}/forecast/",
            f"/api/v1/campaigns/{pk}/hardware-options/",
            f"/api/v1/campaigns/{pk}/ledger/summary/",
            f"/api/v1/campaigns/{pk}/spend/",
            "/api/v1/runs/diverged/",
            "/api/v1/runs/diverged/metrics/?name=loss&max_points=3",
            "/api/v1/runs/nan/metrics/?name=loss",
        ):
            self.assert_answers(self.api, path)

    def test_the_closing_report_in_every_rendering(self) -> None:
        with celery_eager(), self.captureOnCommitCallbacks(execute=True):
            report = request_report(campaign=self.campaign, acting_user=self.owner)
        report = Report.objects.get(pk=report.pk)
        self.assertEqual(report.status, "ready", report.error if hasattr(report, "error") else "")
        for rendering in ("html", "markdown", "json"):
            self.assert_answers(self.api, f"/api/v1/reports/{report.pk}/{rendering}/")

"""The report (issue 18, item 7): a report built before the close is marked out of date once
the campaign closes (in every rendering and in the report list) and is regenerated with one
action; the Markdown carries the sections the HTML has (spend over time, quality per dollar)."""

from __future__ import annotations

from django.test import TestCase
from django.urls import reverse

from campaigns.models import Team
from campaigns.services.campaigns import close_campaign
from campaigns.tests.factories import as_user, celery_eager, committed_campaign, make_user
from ledger.models import Report
from ledger.services import request_report


class AReportBuiltBeforeTheClose(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.owner = make_user("olga", team=cls.team, role="owner")
        cls.campaign = committed_campaign(cls.team)

    def build(self) -> Report:
        with celery_eager(), self.captureOnCommitCallbacks(execute=True):
            report = request_report(campaign=self.campaign, acting_user=self.owner)
        return Report.objects.get(pk=report.pk)

    def test_is_marked_out_of_date_once_the_campaign_closes(self) -> None:
        report = self.build()
        api = as_user(self.owner)
        self.assertNotContains(api.get(f"/api/v1/reports/{report.pk}/html/"), "Out of date")
        close_campaign(campaign=self.campaign, acting_user=self.owner, conclusion="A wins")
        report.refresh_from_db()
        self.assertTrue(report.out_of_date)
        self.assertContains(api.get(f"/api/v1/reports/{report.pk}/html/"), 'id="out-of-date"')
        self.assertContains(api.get(f"/api/v1/reports/{report.pk}/markdown/"), "Out of date")
        self.assertTrue(api.get(f"/api/v1/reports/{report.pk}/json/").json()["out_of_date"])
        self.client.force_login(self.owner)
        listing = reverse("admin:ledger_report_changelist")
        self.assertContains(self.client.get(listing), "out of date: generated before the close")
        with celery_eager(), self.captureOnCommitCallbacks(execute=True):
            answer = self.client.post(
                listing, {"action": "regenerate", "_selected_action": [report.pk]}, follow=True
            )
        self.assertEqual(answer.status_code, 200)
        fresh = Report.objects.filter(campaign=self.campaign).order_by("-id").first()
        assert fresh is not None
        self.assertNotEqual(fresh.pk, report.pk)
        self.assertFalse(fresh.out_of_date)
        self.assertIn("A wins", fresh.markdown)

    def test_the_markdown_has_the_htmls_sections(self) -> None:
        report = self.build()
        self.assertIn("Quality per dollar", report.markdown)
        self.assertIn("Spend over time", report.markdown)

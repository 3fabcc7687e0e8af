"""The ledger in the admin: entries add-only, deliverables read-only, reports downloadable,
all scoped to the caller's teams."""

from __future__ import annotations

from decimal import Decimal

from django.test import TestCase
from django.urls import reverse

from campaigns.models import Team
from campaigns.tests.factories import GOOD_SHA, celery_eager, committed_campaign, make_user
from ledger import services as ledger_services
from ledger.admin import campaign_reports_link
from ledger.models import LedgerEntry, Report
from ledger.services import submit_deliverable
from ledger.services.closing_reports import build
from ledger.templatetags.ledger_links import campaign_reports_url


class LedgerAdminTests(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.other = Team.objects.create(name="vision")
        cls.planner = make_user("pia", team=cls.team)
        cls.viewer = make_user("vic", team=cls.team, role="viewer")
        cls.campaign = committed_campaign(cls.team, title="Ours")
        cls.theirs = committed_campaign(cls.other, title="Theirs")
        cls.entry = LedgerEntry.objects.get(campaign=cls.campaign)
        cls.their_entry = LedgerEntry.objects.get(campaign=cls.theirs)
        cls.deliverable = submit_deliverable(
            campaign=cls.campaign,
            kind="predictions",
            corpus_name="tickets",
            corpus_revision="abc",
            files=[{"path": "/tmp/p.jsonl", "size_bytes": 0, "sha256": GOOD_SHA}],
        )
        cls.report = Report.objects.create(campaign=cls.campaign)
        build(cls.report.pk)
        cls.their_report = Report.objects.create(campaign=cls.theirs)
        build(cls.their_report.pk)

    def setUp(self) -> None:
        self.client.force_login(self.planner)

    def test_every_ledger_admin_page_renders_for_a_planner(self) -> None:
        for name, args in [
            ("admin:ledger_ledgerentry_changelist", []),
            ("admin:ledger_ledgerentry_add", []),
            ("admin:ledger_ledgerentry_change", [self.entry.pk]),
            ("admin:ledger_deliverable_changelist", []),
            ("admin:ledger_deliverable_change", [self.deliverable.pk]),
            ("admin:ledger_report_changelist", []),
            ("admin:ledger_report_change", [self.report.pk]),
        ]:
            with self.subTest(page=name):
                self.assertEqual(self.client.get(reverse(name, args=args)).status_code, 200)

    def test_lists_show_only_the_callers_teams(self) -> None:
        page = self.client.get(reverse("admin:ledger_ledgerentry_changelist"))
        self.assertContains(page, "Ours")
        self.assertNotContains(page, "Theirs")
        for name, obj in [
            ("admin:ledger_ledgerentry_change", self.their_entry),
            ("admin:ledger_report_change", self.their_report),
        ]:
            with self.subTest(page=name):
                self.assertEqual(self.client.get(reverse(name, args=[obj.pk])).status_code, 404)

    def test_a_planner_adds_an_entry_through_the_domain_rules(self) -> None:
        url = reverse("admin:ledger_ledgerentry_add")
        refused = self.client.post(
            url,
            {
                "campaign": self.campaign.pk,
                "kind": "included",
                "description": "disk",
                "amount": "3.50",
                "currency": "EUR",
            },
        )
        self.assertEqual(refused.status_code, 200)
        self.assertContains(refused, "never summed")
        added = self.client.post(
            url,
            {
                "campaign": self.campaign.pk,
                "kind": "included",
                "description": "disk",
                "amount": "3.50",
                "currency": "USD",
            },
        )
        self.assertEqual(added.status_code, 302)
        entry = LedgerEntry.objects.get(description="disk")
        self.assertEqual((entry.amount, entry.created_by), (Decimal("3.50"), self.planner))

    def test_a_reversal_is_added_by_naming_the_entry_and_only_once(self) -> None:
        url = reverse("admin:ledger_ledgerentry_add")
        added = self.client.post(url, {"campaign": self.campaign.pk, "reverses": self.entry.pk})
        self.assertEqual(added.status_code, 302)
        reversal = LedgerEntry.objects.get(reverses=self.entry)
        self.assertEqual(reversal.amount, Decimal("-47.14"))
        again = self.client.post(url, {"campaign": self.campaign.pk, "reverses": self.entry.pk})
        self.assertEqual(again.status_code, 200)
        self.assertEqual(LedgerEntry.objects.filter(reverses=self.entry).count(), 1)

    def test_an_entry_cannot_be_added_to_another_teams_campaign(self) -> None:
        answer = self.client.post(
            reverse("admin:ledger_ledgerentry_add"),
            {
                "campaign": self.theirs.pk,
                "kind": "included",
                "description": "sneaky",
                "amount": "1.00",
                "currency": "USD",
            },
        )
        self.assertEqual(answer.status_code, 200)  # the form refuses the choice
        self.assertFalse(LedgerEntry.objects.filter(description="sneaky").exists())

    def test_an_entry_is_read_only_once_written_and_never_deleted(self) -> None:
        url = reverse("admin:ledger_ledgerentry_change", args=[self.entry.pk])
        page = self.client.get(url)
        self.assertNotContains(page, 'name="_save"')
        self.assertContains(page, "47.14")
        self.assertEqual(self.client.post(url, {"amount": "0.00"}).status_code, 403)
        delete = reverse("admin:ledger_ledgerentry_delete", args=[self.entry.pk])
        self.assertEqual(self.client.post(delete, {"post": "yes"}).status_code, 403)
        self.entry.refresh_from_db()
        self.assertEqual(self.entry.amount, Decimal("47.14"))

    def test_a_viewer_cannot_add_entries(self) -> None:
        self.client.force_login(self.viewer)
        self.assertEqual(self.client.get(reverse("admin:ledger_ledgerentry_add")).status_code, 403)

    def test_a_deliverable_shows_its_rejection_reasons_and_cannot_be_edited(self) -> None:
        url = reverse("admin:ledger_deliverable_change", args=[self.deliverable.pk])
        page = self.client.get(url)
        self.assertContains(page, "empty file: /tmp/p.jsonl (0 bytes)")
        self.assertNotContains(page, 'name="_save"')
        # Submitted again, not edited: the add form is a new submission (test_deliverable_admin).
        self.assertEqual(self.client.get(reverse("admin:ledger_deliverable_add")).status_code, 200)

    def test_reports_download_from_the_admin_in_each_format(self) -> None:
        page = self.client.get(reverse("admin:ledger_report_change", args=[self.report.pk]))
        for rendering, content_type in [
            ("html", "text/html"),
            ("markdown", "text/markdown"),
            ("json", "application/json"),
        ]:
            url = reverse("admin:ledger_report_download", args=[self.report.pk, rendering])
            with self.subTest(rendering=rendering):
                self.assertContains(page, url)
                answer = self.client.get(url)
                self.assertEqual(answer.status_code, 200)
                self.assertTrue(answer["Content-Type"].startswith(content_type))
                self.assertIn(b"Ours", answer.content)
        theirs = reverse("admin:ledger_report_download", args=[self.their_report.pk, "html"])
        self.assertEqual(self.client.get(theirs).status_code, 404)

    def test_the_campaign_link_lists_that_campaigns_reports(self) -> None:
        Report.objects.create(campaign=committed_campaign(self.team, title="Sibling"))
        self.assertIn(campaign_reports_url(self.campaign), campaign_reports_link(self.campaign))
        page = self.client.get(campaign_reports_url(self.campaign))
        self.assertEqual(page.status_code, 200)
        self.assertContains(page, "Ours")
        self.assertNotContains(page, "Sibling")

    def test_request_report_is_what_the_campaign_admin_action_calls(self) -> None:
        with celery_eager(), self.captureOnCommitCallbacks(execute=True):
            report = ledger_services.request_report(
                campaign=self.campaign, acting_user=self.planner
            )
        report.refresh_from_db()
        self.assertEqual((report.status, report.requested_by), ("ready", self.planner))
        self.assertIn("Closing report: Ours", report.html)

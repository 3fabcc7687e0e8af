"""Shared closing reports (docs/domain.md §16.4) through Django's test client: the team's own
link, the signed link's refusals, and who may share."""

from __future__ import annotations

from datetime import timedelta

from django.core.exceptions import ValidationError
from django.test import TestCase
from django.utils import timezone

from campaigns.models import Team
from campaigns.tests.factories import committed_campaign, make_user
from ledger.models import Report, ReportShare
from ledger.services.closing_reports import build
from ledger.services.report_shares import revoke_share, share_report, token_of


class ReportSharesTests(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.planner = make_user("pia", team=cls.team, role="planner")
        cls.viewer = make_user("vic", team=cls.team, role="viewer")
        cls.stranger = make_user("sam", team=Team.objects.create(name="vision"))
        cls.report = build(Report.objects.create(campaign=committed_campaign(cls.team)).pk)

    def test_a_member_reads_the_report_and_another_teams_member_finds_nothing(self) -> None:
        self.client.force_login(self.viewer)
        page = self.client.get(f"/reports/{self.report.pk}/")
        self.assertEqual(page.status_code, 200)
        self.assertEqual(page["Content-Disposition"], "inline")
        self.assertContains(page, 'id="report-banner"')
        self.client.force_login(self.stranger)
        self.assertEqual(self.client.get(f"/reports/{self.report.pk}/").status_code, 404)

    def test_the_link_opens_signed_out_until_revoked_or_expired(self) -> None:
        share, token = share_report(report=self.report, acting_user=self.planner, days=2)
        url = f"/shared/reports/{token}/"
        opened = self.client.get(url)
        self.assertEqual(opened.status_code, 200)
        self.assertEqual(opened["Cache-Control"], "private, no-store")
        self.assertEqual(self.client.get(url[:-3] + "x/").status_code, 404)
        other = ReportShare.objects.create(
            report=self.report, nonce="0" * 32, expires_at=timezone.now() + timedelta(days=1)
        )
        forged = token_of(other).replace(str(other.pk), str(share.pk), 1)
        self.assertEqual(self.client.get(f"/shared/reports/{forged}/").status_code, 404)
        ReportShare.objects.filter(pk=share.pk).update(expires_at=timezone.now())
        self.assertContains(self.client.get(url), "has expired", status_code=410)
        ReportShare.objects.filter(pk=share.pk).update(
            expires_at=timezone.now() + timedelta(days=1)
        )
        revoke_share(share=share, acting_user=self.planner)
        self.assertContains(self.client.get(url), "was revoked", status_code=410)

    def test_a_share_lasts_one_to_ninety_days_and_only_a_ready_report_is_shared(self) -> None:
        for days in (0, 91, True):
            with self.assertRaises(ValidationError):
                share_report(report=self.report, acting_user=self.planner, days=days)
        pending = Report.objects.create(campaign=self.report.campaign)
        with self.assertRaises(ValidationError):
            share_report(report=pending, acting_user=self.planner, days=1)

    def test_a_viewer_cannot_share_through_the_admin(self) -> None:
        self.client.force_login(self.viewer)
        answer = self.client.post(
            "/admin/ledger/reportshare/add/", {"report": self.report.pk, "days": 3, "note": ""}
        )
        self.assertIn(answer.status_code, {200, 403})
        self.assertFalse(ReportShare.objects.exists())

"""Bad input answers a 4xx naming the field (issue 32, item 5): a team renamed with a line break
made every export answer 500, and a `"` in its name put a second `filename=` in the export's
header; `period=9999-12` answered 500; currency `ZZZ`, an amount `-0` and Arabic-Indic digits
in a period were taken; a metric name took bidirectional controls."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.test import TestCase
from django.urls import reverse

from campaigns.models import Team
from campaigns.services import teams
from campaigns.tests.factories import as_user, committed_campaign, make_user, post
from catalog.validators import currency_validator
from ledger.models import LedgerEntry
from tests.adminforms import form_data


class BadInputIsRefusedByName(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.owner = make_user("olga", team=cls.team, role="owner")
        cls.campaign = committed_campaign(cls.team, cls.owner, lots=0)

    def setUp(self) -> None:
        self.desk = as_user(self.owner)

    def assert_refused(self, answer: Any, field: str) -> None:
        self.assertEqual(answer.status_code, 400, answer.content)
        self.assertIn(field, str(answer.json()))

    def export(self, period: str) -> Any:
        url = f"/api/v1/teams/{self.team.pk}/ledger/export"
        return self.desk.get(url, {"format": "csv", "period": period})

    def test_a_team_name_with_a_line_break_is_refused_in_the_admin(self) -> None:
        superuser = make_user("root", is_superuser=True)
        self.client.force_login(superuser)
        url = reverse("admin:campaigns_team_change", args=[self.team.pk])
        data = form_data(self.client.get(url).content.decode(), "team_form")
        answer = self.client.post(url, {**data, "name": "nlp\r\nSet-Cookie: x=1"})
        self.assertEqual(answer.status_code, 200)
        self.assertContains(answer, "one line of text")
        self.team.refresh_from_db()
        self.assertEqual(self.team.name, "nlp")
        with self.assertRaises(ValidationError) as refused:
            teams.rename_team(team=self.team, name="a\nb", acting_user=superuser)
        self.assertIn("name", refused.exception.message_dict)

    def test_any_stored_team_name_gives_one_safe_file_name(self) -> None:
        for name in ['nlp"; filename="evil.exe', "nlp\nline two", "équipe ünï"]:
            Team.objects.filter(pk=self.team.pk).update(name=name)  # as older versions stored
            with self.subTest(name=name):
                answer = self.export("2026-03")
                self.assertEqual(answer.status_code, 200)
                header = answer["Content-Disposition"]
                self.assertEqual(header.count("filename="), 1, header)
                self.assertEqual(header.count('"'), 2, header)
                self.assertNotIn("\n", header)

    def test_periods_out_of_range_or_in_other_digits_are_refused_naming_period(self) -> None:
        for period in [
            "9999-12",
            "9999-Q4",
            "0001-01",
            "٢٠٢٦-٠٣",
            "２０２６-03",
            "2026-3",
            "2026-13",
        ]:
            with self.subTest(period=period):
                self.assert_refused(self.export(period), "period")
        self.assertEqual(self.export("9998-12").status_code, 200)

    def test_a_currency_outside_iso_4217_is_refused_naming_currency(self) -> None:
        url = f"/api/v1/campaigns/{self.campaign.pk}/ledger/"
        body = {"kind": "included", "description": "storage", "amount": "5.00"}
        for currency in ["ZZZ", "XXX", "usd"]:
            with self.subTest(currency=currency):
                self.assert_refused(
                    post(self.desk, url, {**body, "currency": currency}), "currency"
                )
        self.assertEqual(post(self.desk, url, {**body, "currency": "USD"}).status_code, 201)
        with self.assertRaises(ValidationError):
            currency_validator("ZZZ")

    def test_a_negative_zero_amount_is_refused_naming_amount(self) -> None:
        url = f"/api/v1/campaigns/{self.campaign.pk}/ledger/"
        body = {"kind": "included", "description": "storage", "currency": "USD"}
        before = LedgerEntry.objects.count()
        for amount in ["-0", "-0.00", "-00.0"]:
            with self.subTest(amount=amount):
                answer = post(self.desk, url, {**body, "amount": amount})
                self.assert_refused(answer, "amount")
                self.assertIn("negative zero", str(answer.json()))
        self.assertEqual(LedgerEntry.objects.count(), before)

    def test_a_metric_name_with_a_bidirectional_control_is_refused_naming_name(self) -> None:
        post(self.desk, f"/api/v1/campaigns/{self.campaign.pk}/runs/", {"run_id": "r-1"})
        for name in ["loss\u202etxt", "\u2066val_loss\u2069"]:
            with self.subTest(name=repr(name)):
                answer = post(
                    self.desk,
                    "/api/v1/runs/r-1/metrics/",
                    {"points": [{"name": name, "step": 1, "value": 1.0}]},
                )
                self.assert_refused(answer, "name")
                self.assertIn("text-direction", str(answer.json()))

"""The team allowance admin shows only the caller's teams (issue 32, tenancy in the admin): its
list, its search, its popup lookups (`_to_field`, `_popup`) and its team filter named another
team's allowances and every team's name to any member."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from django.test import TestCase
from django.urls import reverse

from campaigns.models import Team
from campaigns.tests.factories import make_user
from ledger.models import TeamAllowance

SECRET = "zq-secret"


class TheAllowanceListNamesOnlyMyTeams(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.a = Team.objects.create(name="team-a")
        cls.b = Team.objects.create(name=f"team-b-{SECRET}")
        cls.owner = make_user("olga", team=cls.a, role="owner")
        TeamAllowance.objects.create(
            team=cls.a, period_kind="month", period_start=date(2026, 1, 1),
            amount=Decimal("100.00"), currency="USD",
        )  # fmt: skip
        cls.theirs = TeamAllowance.objects.create(
            team=cls.b, period_kind="month", period_start=date(2026, 1, 1),
            amount=Decimal("98765.43"), currency="EUR", gpu_model=f"H100-{SECRET}",
        )  # fmt: skip

    def setUp(self) -> None:
        self.client.force_login(self.owner)

    def assert_tells_nothing(self, url: str) -> str:
        answer = self.client.get(url)
        text = answer.content.decode()
        self.assertNotIn(SECRET, text, url)
        self.assertNotIn("98765", text, url)
        return text

    def test_list_search_popup_and_filter_name_only_my_team(self) -> None:
        changelist = reverse("admin:ledger_teamallowance_changelist")
        for query in (
            "",
            "?q=H100",
            "?q=team-b",
            "?_to_field=id&_popup=1",
            f"?_to_field=id&_popup=1&team__id__exact={self.b.pk}",
            f"?team__id__exact={self.b.pk}",
            "?_to_field=gpu_model&_popup=1",
        ):
            self.assert_tells_nothing(changelist + query)
        listed = self.client.get(changelist).content.decode()
        self.assertIn("team-a", listed)
        self.assertIn("100.00", listed)

    def test_their_allowance_answers_as_a_missing_one(self) -> None:
        change = "admin:ledger_teamallowance_change"
        theirs = self.client.get(reverse(change, args=[self.theirs.pk]))
        missing = self.client.get(reverse(change, args=[10**7]))
        self.assertEqual(theirs.status_code, missing.status_code)
        self.assertEqual(theirs.status_code, 404)

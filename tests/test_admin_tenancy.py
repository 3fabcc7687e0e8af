"""No admin page lets one team read another's objects (docs/api.md, tenancy): every widget,
filter and lookup is scoped to the caller's teams, and another team's id is refused in the same
words as an id that does not exist. Each test posts team B's ids through team A's planner and
checks that none of B's text comes back."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from django.test import TestCase
from django.urls import reverse

from campaigns.models import PlannedItem, Stage, Team
from campaigns.services.plans import commit_plan
from campaigns.tests.factories import make_plannable, make_user
from ledger.models import EntryKind, LedgerEntry
from tests.adminforms import form_data

SECRET = "zq-secret"  # every label of team B carries it


def _errors(text: str, *ids: int) -> list[str]:
    """The page's error lists, ids blanked out, so 'id 7 is missing' and 'id 9 is missing'
    compare equal."""
    found = re.findall(r'<ul class="errorlist[^"]*"[^>]*>.*?</ul>', text, flags=re.S)
    for n in ids:
        found = [re.sub(rf"\b{n}\b", "ID", e) for e in found]
    return found


class AnotherTeamsIdsTellNothing(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.a = Team.objects.create(name="team-a")
        cls.b = Team.objects.create(name=f"team-b-{SECRET}")
        cls.planner = make_user("pia", team=cls.a)
        make_user(f"bob-{SECRET}", team=cls.b)
        cls.mine = make_plannable(cls.a, title="Our plan")
        commit_plan(campaign=cls.mine, acting_user=cls.planner)
        cls.theirs = make_plannable(cls.b, title=f"Their plan {SECRET}")
        PlannedItem.objects.filter(campaign=cls.theirs, tier="useful").update(
            name=f"their item {SECRET}"
        )
        Stage.objects.filter(campaign=cls.theirs).update(name=f"their stage {SECRET}")
        commit_plan(campaign=cls.theirs)
        cls.their_entry = LedgerEntry.objects.create(
            campaign=cls.theirs,
            kind=EntryKind.EXTERNAL,
            description=f"their invoice {SECRET}",
            amount=Decimal("999.99"),
            currency="USD",
        )
        cls.their_item = PlannedItem.objects.get(campaign=cls.theirs, tier="useful")
        cls.their_stage = Stage.objects.get(campaign=cls.theirs)
        # An id no row has, to compare the refusals with.
        cls.nobody = 10_000_000

    def setUp(self) -> None:
        self.client.force_login(self.planner)

    def assert_tells_nothing(self, answer: Any) -> None:
        text = answer.content.decode()
        self.assertNotIn(SECRET, text)
        self.assertNotIn("999.99", text)

    def test_the_ledger_entry_form_treats_their_ids_as_missing(self) -> None:
        url = reverse("admin:ledger_ledgerentry_add")
        base = {"kind": "", "description": "", "amount": "", "currency": ""}
        theirs = self.client.post(
            url, {**base, "campaign": self.mine.pk, "reverses": self.their_entry.pk}
        )
        missing = self.client.post(url, {**base, "campaign": self.mine.pk, "reverses": self.nobody})
        self.assert_tells_nothing(theirs)
        refusal = _errors(theirs.content.decode(), self.their_entry.pk)
        self.assertTrue(refusal)
        self.assertEqual(refusal, _errors(missing.content.decode(), self.nobody))
        other_campaign = self.client.post(
            url,
            {
                "campaign": self.theirs.pk,
                "kind": "external",
                "description": "x",
                "amount": "1",
                "currency": "USD",
            },
        )
        self.assert_tells_nothing(other_campaign)
        self.assertContains(other_campaign, "Select a valid choice")
        self.assertEqual(LedgerEntry.objects.filter(description="x").count(), 0)

    def test_the_add_form_offers_and_takes_only_my_teams(self) -> None:
        url = reverse("admin:campaigns_campaign_add")
        self.assert_tells_nothing(self.client.get(url))
        answer = self.client.post(
            url,
            {
                "team": self.b.pk,
                "title": "x",
                "question": "q",
                "corpus_name": "c",
                "corpus_revision": "r",
                "window_hours": "72",
                "currency": "USD",
            },
        )
        self.assert_tells_nothing(answer)
        self.assertContains(answer, "Select a valid choice")

    def test_the_campaign_page_refuses_their_items_and_stages_in_its_inlines(self) -> None:
        draft = make_plannable(self.a, title="Our draft")
        url = reverse("admin:campaigns_campaign_change", args=[draft.pk])
        data = form_data(self.client.get(url).content.decode(), "campaign_form")
        data["stages-0-variant"] = str(self.their_item.pk)
        data["stages-0-depends_on"] = [str(self.their_stage.pk)]
        answer = self.client.post(url, data)
        self.assert_tells_nothing(answer)
        self.assertContains(answer, "Select a valid choice")
        self.assertFalse(Stage.objects.get(campaign=draft).depends_on.exists())
        committed = reverse("admin:campaigns_campaign_change", args=[self.mine.pk])
        data = form_data(self.client.get(committed).content.decode(), "campaign_form")
        data.update(
            {
                "decisions-TOTAL_FORMS": str(int(data["decisions-TOTAL_FORMS"]) + 1),
                "decisions-0-label": "after the pilot",
                "decisions-0-outcome": "cut",
                "decisions-0-rationale": "x",
                "decisions-0-cut_variants": [str(self.their_item.pk)],
            }
        )
        answer = self.client.post(committed, data)
        self.assert_tells_nothing(answer)
        self.their_item.refresh_from_db()
        self.assertEqual(self.their_item.status, "planned")

    def test_lists_filters_and_lookups_name_only_my_teams(self) -> None:
        pages = [
            reverse("admin:campaigns_campaign_changelist"),
            reverse("admin:campaigns_campaign_changelist") + f"?team__id__exact={self.b.pk}",
            reverse("admin:ledger_ledgerentry_changelist"),
            reverse("admin:ledger_report_changelist") + f"?campaign__id__exact={self.theirs.pk}",
            reverse("admin:campaigns_run_changelist"),
            reverse("admin:campaigns_team_changelist"),
            reverse("admin:ledger_deliverable_changelist"),
            reverse("admin:campaigns_planbaseline_changelist"),
        ]
        for page in pages:
            answer = self.client.get(page)
            self.assertIn(answer.status_code, {200, 302}, page)
            self.assert_tells_nothing(answer)
        self.assertContains(self.client.get(pages[0]), "team-a")

    def test_their_objects_answer_as_missing_ones_do(self) -> None:
        for name, pk in [
            ("campaigns_campaign", self.theirs.pk),
            ("campaigns_team", self.b.pk),
            ("ledger_ledgerentry", self.their_entry.pk),
        ]:
            for suffix in ("change", "history"):
                theirs = self.client.get(reverse(f"admin:{name}_{suffix}", args=[pk]))
                missing = self.client.get(reverse(f"admin:{name}_{suffix}", args=[self.nobody]))
                self.assertEqual(theirs.status_code, missing.status_code, (name, suffix))
                self.assert_tells_nothing(theirs)

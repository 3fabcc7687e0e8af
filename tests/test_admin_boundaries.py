"""No admin form answers 5xx (issue 18, item 2): every add and change form of the campaign admin,
each of its inlines and the other admins a planner or owner reaches, posted with boundary values
(negative, zero, huge, non-finite, empty) in each field, answers a page with the error beside the
field or a saved redirect; a refused post stores nothing."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from django.apps import apps
from django.db import transaction
from django.test import TestCase
from django.urls import reverse

from campaigns.models import Campaign, DecisionPoint, Stage, Team
from campaigns.services.plans import commit_plan
from campaigns.tests.factories import make_plannable, make_user
from tests.adminforms import form_data

BOUNDARIES = ["-3", "0", "7.8e24", "nan", ""]
# Fields whose text is free (titles, notes): the empty string and a long text are their edges.
TEXT_BOUNDARIES = [""]
SKIP = {"csrfmiddlewaretoken", "_save", "_continue"}


def fingerprint() -> dict[str, Any]:
    """Every row of the project's own apps, as stored: a refused post changes none of it."""
    rows: dict[str, Any] = {}
    for label in ("campaigns", "ledger", "estimates"):
        for model in apps.get_app_config(label).get_models():
            if model._meta.db_table.endswith("idempotencyrecord"):
                continue
            values = model.objects.order_by("pk").values()
            rows[model._meta.label] = [
                {k: v for k, v in row.items() if k not in {"updated_at"}} for row in values
            ]
    return rows


def is_number_field(name: str) -> bool:
    tail = name.rsplit("-", 1)[-1]
    return any(
        word in tail
        for word in (
            "hours",
            "budget",
            "rate",
            "threshold",
            "quantity",
            "tokens",
            "params",
            "gpus",
            "flops",
            "mfu",
            "length",
            "epochs",
            "batch",
            "amount",
            "seq",
            "steps",
            "examples",
            "memory",
            "size",
            "factor",
        )
    )


class EveryAdminFormRefusesWithoutA500(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.owner = make_user("olga", team=cls.team, role="owner")
        cls.draft = make_plannable(cls.team, title="Draft plan")
        cls.committed = make_plannable(cls.team, title="Committed plan")
        DecisionPoint.objects.create(campaign=cls.committed, label="after the pilot")
        commit_plan(campaign=cls.committed, acting_user=cls.owner)

    def setUp(self) -> None:
        self.client.force_login(self.owner)

    def walk(self, url: str, form_id: str, *, only: set[str] | None = None) -> int:
        """Post the page's form once per field and boundary value; returns how many posts."""
        page = self.client.get(url)
        self.assertEqual(page.status_code, 200, url)
        data = form_data(page.content.decode(), form_id)
        self.assertTrue(data, f"no form {form_id} on {url}")
        posts = 0
        before = fingerprint()
        for name in sorted(data):
            if name in SKIP or name.endswith(("TOTAL_FORMS", "INITIAL_FORMS", "_FORMS", "-id")):
                continue
            if name.endswith(("-campaign", "-DELETE")) or isinstance(data[name], list):
                continue
            if only is not None and name not in only:
                continue
            row = re.search(r"-(\d+)-[^-]+$", name)
            if name.startswith("initial-") or (row and row.group(1) != "0" and only is None):
                continue  # one stored row per table; new rows are the add form's test
            values = BOUNDARIES if is_number_field(name) else TEXT_BOUNDARIES
            for value in values:
                posts += 1
                self.post_one(url, {**data, name: value}, f"{url} {name}={value!r}", before)
        return posts

    def post_one(
        self, url: str, data: dict[str, Any], what: str, before: dict[str, Any] | None = None
    ) -> None:
        """Post once and roll back. ``before`` is the stored rows, taken once per page: every
        post is rolled back, so the rows before each post are the same."""
        before = fingerprint() if before is None else before
        with transaction.atomic():
            answer = self.client.post(url, data)
            self.assertLess(answer.status_code, 500, what)
            if answer.status_code == 200:
                self.assertEqual(fingerprint(), before, f"a refused post stored rows: {what}")
                self.assertContains(answer, "errorlist", msg_prefix=what)
            transaction.set_rollback(True)

    def test_the_campaign_add_form(self) -> None:
        url = reverse("admin:campaigns_campaign_add")
        page = self.client.get(url)
        data = form_data(page.content.decode(), "campaign_form")
        data.update(
            {
                "title": "A new plan",
                "question": "Does A beat B?",
                "corpus_name": "tickets",
                "corpus_revision": "r1",
                "items-0-name": "baseline",
                "items-0-role": "baseline",
                "items-0-tier": "mandatory",
                "items-0-planned_hours": "4",
                "stages-0-name": "train",
                "stages-0-kind": "training",
                "stages-0-planned_hours": "4",
                "lots-0-quantity": "1",
            }
        )
        before = fingerprint()
        for name in sorted(data):
            if not is_number_field(name):
                continue
            for value in BOUNDARIES:
                self.post_one(url, {**data, name: value}, f"add {name}={value!r}", before)

    def test_the_draft_campaign_page_and_its_inlines(self) -> None:
        url = reverse("admin:campaigns_campaign_change", args=[self.draft.pk])
        self.assertGreater(self.walk(url, "campaign_form"), 50)

    def test_the_committed_campaign_page_and_its_inlines(self) -> None:
        url = reverse("admin:campaigns_campaign_change", args=[self.committed.pk])
        self.assertGreater(self.walk(url, "campaign_form"), 20)

    def test_observed_hours_after_commit(self) -> None:
        url = reverse("admin:campaigns_campaign_change", args=[self.committed.pk])
        self.walk(url, "campaign_form", only={"stages-0-observed_hours"})

    def test_the_team_page(self) -> None:
        url = reverse("admin:campaigns_team_change", args=[self.team.pk])
        self.walk(url, "team_form")

    def test_the_ledger_entry_add_form(self) -> None:
        url = reverse("admin:ledger_ledgerentry_add")
        page = self.client.get(url)
        data = form_data(page.content.decode(), "ledgerentry_form")
        data.update({"campaign": str(self.committed.pk), "description": "an invoice"})
        for value in BOUNDARIES:
            self.post_one(url, {**data, "amount": value}, f"ledger amount={value!r}")

    def test_the_close_page(self) -> None:
        url = reverse("admin:campaigns_campaign_close", args=[self.committed.pk])
        for value in TEXT_BOUNDARIES:
            self.post_one(url, {"conclusion": value}, f"close conclusion={value!r}")


class TheRefusalsThatWere500s(TestCase):
    """The crashes of issue 18, each now a field error with nothing stored."""

    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.planner = make_user("pia", team=cls.team)
        cls.draft = make_plannable(cls.team, title="Draft plan")

    def setUp(self) -> None:
        self.client.force_login(self.planner)
        self.url = reverse("admin:campaigns_campaign_change", args=[self.draft.pk])
        self.data = form_data(self.client.get(self.url).content.decode(), "campaign_form")

    def test_negative_planned_hours_on_a_new_item(self) -> None:
        answer = self.client.post(
            self.url,
            {
                **self.data,
                "items-2-name": "variant B",
                "items-2-role": "variant",
                "items-2-tier": "useful",
                "items-2-planned_hours": "-3",
                "items-TOTAL_FORMS": "3",
            },
        )
        self.assertEqual(answer.status_code, 200)
        self.assertContains(answer, "greater than or equal to 0")
        self.assertFalse(self.draft.items.filter(name="variant B").exists())

    def test_negative_planned_hours_on_an_existing_item(self) -> None:
        answer = self.client.post(self.url, {**self.data, "items-0-planned_hours": "-3"})
        self.assertEqual(answer.status_code, 200)
        self.assertContains(answer, "greater than or equal to 0")
        self.assertEqual(self.draft.items.get(name="baseline").planned_hours, Decimal("10"))

    def test_a_zero_or_negative_window(self) -> None:
        for value in ("0", "-5"):
            answer = self.client.post(self.url, {**self.data, "window_hours": value})
            self.assertEqual(answer.status_code, 200, value)
            self.assertContains(answer, "window")
            self.assertEqual(Campaign.objects.get(pk=self.draft.pk).window_hours, Decimal("72"))

    def test_a_stage_row_refused_by_its_service_keeps_the_other_rows_unsaved(self) -> None:
        answer = self.client.post(
            self.url,
            {**self.data, "stages-0-planned_hours": "-1", "title": "Renamed in the same save"},
        )
        self.assertEqual(answer.status_code, 200)
        self.assertEqual(Campaign.objects.get(pk=self.draft.pk).title, "Draft plan")
        self.assertEqual(Stage.objects.get(campaign=self.draft).planned_hours, Decimal("22"))

    def test_an_existing_zero_window_does_not_break_the_page(self) -> None:
        Campaign.objects.filter(pk=self.draft.pk).update(window_hours=Decimal("0"))
        self.assertEqual(self.client.get(self.url).status_code, 200)
        answer = self.client.get(f"/api/v1/campaigns/{self.draft.pk}/hardware-options/")
        self.assertLess(answer.status_code, 500)


class TheApiRefusesWhatTheAdminRefuses(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.planner = make_user("pia", team=cls.team)
        cls.draft = make_plannable(cls.team, title="Draft plan")

    def test_the_campaign_fields(self) -> None:
        from campaigns.tests.factories import as_user as client_for

        api = client_for(self.planner)
        url = f"/api/v1/campaigns/{self.draft.pk}/"
        for field, value in (
            ("window_hours", 0),
            ("window_hours", "0"),
            ("window_hours", -5),
            ("window_hours", "nan"),
            ("budget", "-1"),
            ("hourly_rate_per_gpu", "-1"),
            ("title", ""),
        ):
            answer = api.patch(url, {field: value}, format="json")
            self.assertEqual(answer.status_code, 400, (field, value, answer.content))
            self.assertIn(field, answer.json(), (field, value))
        self.assertEqual(Campaign.objects.get(pk=self.draft.pk).window_hours, Decimal("72"))

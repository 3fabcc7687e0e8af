"""The admin and the API are two doors to one write path (campaigns/services/): whatever the
API refuses, the admin refuses too, and nothing is written. Each test sends the same change
through both and checks the two answers and the database."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.test import TestCase
from django.urls import reverse

from campaigns.models import (
    Amendment,
    DecisionPoint,
    ItemStatus,
    Outcome,
    PlannedItem,
    Stage,
    StopRule,
    Team,
)
from campaigns.services.plans import commit_plan
from campaigns.tests.factories import as_user, make_plannable, make_user, post
from tests.adminforms import form_data


class AdminRefusesWhatTheApiRefuses(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.planner = make_user("pia", team=cls.team)
        cls.draft = make_plannable(cls.team, title="Draft plan")
        cls.committed = make_plannable(cls.team, title="Committed plan")
        DecisionPoint.objects.create(campaign=cls.committed, label="after the pilot")
        commit_plan(campaign=cls.committed, acting_user=cls.planner)
        cls.variant = PlannedItem.objects.get(campaign=cls.committed, name="variant A")

    def setUp(self) -> None:
        self.client.force_login(self.planner)
        self.api = as_user(self.planner)

    def page(self, campaign: Any) -> tuple[str, dict[str, Any]]:
        url = reverse("admin:campaigns_campaign_change", args=[campaign.pk])
        page = self.client.get(url)
        self.assertEqual(page.status_code, 200)
        return url, form_data(page.content.decode(), "campaign_form")

    def admin_post(self, campaign: Any, **changes: Any) -> Any:
        url, data = self.page(campaign)
        data.update(changes)
        return self.client.post(url, data)

    def assert_admin_refused(self, answer: Any, words: str) -> None:
        # A refused admin save re-renders the page (200) with the error; a save redirects (302).
        self.assertEqual(answer.status_code, 200, "the admin saved what it should refuse")
        self.assertContains(answer, words)

    def test_the_untouched_page_saves(self) -> None:
        # The form reader posts what a browser would: unchanged, the page saves (302).
        self.assertEqual(self.admin_post(self.committed).status_code, 302)
        self.assertEqual(self.admin_post(self.draft).status_code, 302)

    def test_a_cut_without_items(self) -> None:
        api = post(
            self.api,
            f"/api/v1/campaigns/{self.committed.pk}/decisions/",
            {"outcome": "cut", "rationale": "A is enough"},
        )
        self.assertEqual(api.status_code, 400)
        self.assertIn("cut_variants", api.json())
        admin = self.admin_post(
            self.committed, **{"decisions-0-outcome": "cut", "decisions-0-rationale": "A is enough"}
        )
        self.assert_admin_refused(admin, "a cut names the items it cuts")
        self.assertEqual(
            DecisionPoint.objects.get(campaign=self.committed).outcome, Outcome.PENDING
        )

    def test_a_decision_without_a_rationale(self) -> None:
        api = post(
            self.api,
            f"/api/v1/campaigns/{self.committed.pk}/decisions/",
            {"outcome": "cut", "rationale": " ", "cut_variants": [self.variant.pk]},
        )
        self.assertEqual(api.status_code, 400)
        self.assertIn("rationale", api.json())
        admin = self.admin_post(
            self.committed,
            **{
                "decisions-0-outcome": "cut",
                "decisions-0-rationale": " ",
                "decisions-0-cut_variants": [str(self.variant.pk)],
            },
        )
        self.assert_admin_refused(admin, "a decision says why")
        self.variant.refresh_from_db()
        self.assertNotEqual(self.variant.status, ItemStatus.CUT)

    def test_a_cut_with_items_and_a_rationale_is_recorded_by_both(self) -> None:
        admin = self.admin_post(
            self.committed,
            **{
                "decisions-0-outcome": "cut",
                "decisions-0-rationale": "A is enough",
                "decisions-0-cut_variants": [str(self.variant.pk)],
            },
        )
        self.assertEqual(admin.status_code, 302)
        decision = DecisionPoint.objects.get(campaign=self.committed)
        self.assertEqual((decision.outcome, decision.decided_by), (Outcome.CUT, self.planner))
        self.variant.refresh_from_db()
        self.assertEqual(self.variant.status, ItemStatus.CUT)

    def test_an_item_added_after_commit_without_a_reason(self) -> None:
        api = post(
            self.api,
            f"/api/v1/campaigns/{self.committed.pk}/variants/",
            {"name": "variant C", "tier": "exploratory", "planned_hours": "4"},
        )
        self.assertEqual(api.status_code, 400)
        self.assertIn("amendment_reason", api.json())
        url, data = self.page(self.committed)
        n = int(data["items-TOTAL_FORMS"])
        data.update(
            {
                "items-TOTAL_FORMS": str(n + 1),
                f"items-{n}-name": "variant C",
                f"items-{n}-role": "variant",
                f"items-{n}-tier": "exploratory",
                f"items-{n}-planned_hours": "4",
                f"items-{n}-prep_hours": "0",
                f"items-{n}-config": "{}",
            }
        )
        self.assert_admin_refused(self.client.post(url, data), "say why this item is added")
        self.assertFalse(PlannedItem.objects.filter(name="variant C").exists())
        # With a reason, both take it as an amendment (the admin invents no reason).
        data[f"items-{n}-amendment_reason"] = "the pilot showed a gap"
        self.assertEqual(self.client.post(url, data).status_code, 302)
        amendment = Amendment.objects.get(item__name="variant C")
        self.assertEqual(amendment.reason, "the pilot showed a gap")

    def test_an_item_changed_after_commit_without_a_reason(self) -> None:
        url, data = self.page(self.committed)
        row = next(k for k, v in data.items() if k.endswith("-name") and v == "variant A")
        prefix = row.removesuffix("name")
        data[prefix + "planned_hours"] = "30"
        self.assert_admin_refused(self.client.post(url, data), "say why this item changes")
        self.variant.refresh_from_db()
        self.assertEqual(self.variant.planned_hours, Decimal("12"))

    def test_a_stop_rule_after_commit(self) -> None:
        api = post(
            self.api,
            f"/api/v1/campaigns/{self.committed.pk}/stop-rules/",
            {"kind": "input_truncated"},
        )
        self.assertEqual(api.status_code, 409)
        before = StopRule.objects.filter(campaign=self.committed).count()
        url, data = self.page(self.committed)
        # The committed page offers no stop-rule row to add; a forged one is not taken.
        self.assertEqual(data["stop_rules-MAX_NUM_FORMS"], "0")
        n = int(data["stop_rules-TOTAL_FORMS"])
        data.update(
            {"stop_rules-TOTAL_FORMS": str(n + 1), f"stop_rules-{n}-kind": "input_truncated"}
        )
        answer = self.client.post(url, data)
        # The rest of the form is valid and saved (a redirect to the list); the forged row is
        # dropped, not silently added.
        self.assertEqual(answer.status_code, 302, answer.content)
        self.assertEqual(StopRule.objects.filter(campaign=self.committed).count(), before)

    def test_observed_hours_while_draft(self) -> None:
        stage = Stage.objects.get(campaign=self.draft)
        api = post(
            self.api,
            f"/api/v1/campaigns/{self.draft.pk}/stages/{stage.pk}/observed/",
            {"observed_hours": "20"},
        )
        self.assertEqual(api.status_code, 409)
        admin = self.admin_post(self.draft, **{"stages-0-observed_hours": "20"})
        self.assert_admin_refused(admin, "commit the plan first")
        stage.refresh_from_db()
        self.assertIsNone(stage.observed_hours)

    def test_a_threshold_rule_without_its_metric(self) -> None:
        api = post(
            self.api,
            f"/api/v1/campaigns/{self.draft.pk}/stop-rules/",
            {"kind": "metric_threshold", "comparator": "gt", "threshold": 3},
        )
        self.assertEqual(api.status_code, 400)
        self.assertIn("metric", api.json())
        url, data = self.page(self.draft)
        # The inline's one empty row is at INITIAL_FORMS: fill it.
        n = int(data["stop_rules-INITIAL_FORMS"])
        data.update(
            {
                f"stop_rules-{n}-kind": "metric_threshold",
                f"stop_rules-{n}-comparator": "gt",
                f"stop_rules-{n}-threshold": "3",
            }
        )
        self.assert_admin_refused(self.client.post(url, data), "a threshold rule names its metric")
        self.assertEqual(StopRule.objects.filter(campaign=self.draft).count(), n)

    def test_after_commit_only_the_expected_deliverables_change_in_both(self) -> None:
        url = f"/api/v1/campaigns/{self.committed.pk}/"
        frozen = self.api.patch(url, {"title": "New title"}, format="json")
        self.assertEqual(frozen.status_code, 409)
        self.assertIn("title", frozen.json()["detail"])
        free = self.api.patch(url, {"expected_deliverables": "predictions"}, format="json")
        self.assertEqual(free.status_code, 200, free.content)
        self.assertEqual(free.json()["expected_deliverables"], "predictions")
        admin = self.admin_post(self.committed, expected_deliverables="an error analysis")
        self.assertEqual(admin.status_code, 302)
        self.committed.refresh_from_db()
        self.assertEqual(self.committed.title, "Committed plan")
        self.assertEqual(self.committed.expected_deliverables, "an error analysis")

"""Plan editing after the first save through the API (docs/api.md): items, stages, stop rules,
lots and ingest keys, each through the service the admin calls. Success, the state refusal
(409), another team (404), a viewer (403), an ingest key, and bad input (400 naming the field)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.test import TestCase

from campaigns.models import (
    Amendment,
    Campaign,
    LotReservation,
    PlannedItem,
    Stage,
    StopRule,
    Team,
)
from campaigns.services.keys import issue_ingest_key
from campaigns.tests.factories import (
    as_key,
    as_user,
    committed_campaign,
    make_plannable,
    make_user,
    patch,
    post,
)
from catalog.models import RentalPlan
from catalog.services import seed_catalog


class PlanEdits(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        seed_catalog()
        cls.team = Team.objects.create(name="nlp")
        cls.owner = make_user("olga", team=cls.team, role="owner")
        cls.planner = make_user("pia", team=cls.team)
        cls.viewer = make_user("vic", team=cls.team, role="viewer")
        cls.outsider = make_user("otto", team=Team.objects.create(name="vision"), role="owner")
        cls.plan = RentalPlan.objects.filter(currency="USD").order_by("id").first()

    def setUp(self) -> None:
        self.draft = make_plannable(self.team, title="draft")
        self.committed = committed_campaign(
            self.team, self.owner, lots=0, automatic_rules=True, title="committed"
        )
        self.client_ = as_user(self.planner)

    def url(self, campaign: Campaign, tail: str) -> str:
        return f"/api/v1/campaigns/{campaign.pk}/{tail}"

    def item(self, campaign: Campaign, name: str = "variant A") -> PlannedItem:
        return campaign.items.get(name=name)

    def assert_refused(self, answer: Any, status: int, field: str | None = None) -> None:
        self.assertEqual(answer.status_code, status, answer.content)
        if field is not None:
            self.assertIn(field, answer.json())

    # --- items -----------------------------------------------------------------------------

    def test_a_draft_item_is_edited_and_removed(self) -> None:
        item = self.item(self.draft)
        url = self.url(self.draft, f"variants/{item.pk}/")
        answer = patch(self.client_, url, {"planned_hours": "14.5", "tokens": 1000, "epochs": 2})
        self.assertEqual(answer.status_code, 200, answer.content)
        self.assertEqual((answer.json()["planned_hours"], answer.json()["tokens"]), ("14.50", 1000))
        item.refresh_from_db()
        self.assertEqual((item.planned_hours, item.epochs), (Decimal("14.5"), 2.0))
        self.assertFalse(Amendment.objects.filter(item=item).exists())
        self.assertEqual(self.client_.get(url).json()["id"], item.pk)
        self.assertEqual(self.client_.delete(url).status_code, 204)
        self.assertFalse(PlannedItem.objects.filter(pk=item.pk).exists())

    def test_after_commit_an_item_changes_only_as_an_amendment_with_a_reason(self) -> None:
        item = self.item(self.committed)
        url = self.url(self.committed, f"variants/{item.pk}/")
        self.assert_refused(
            patch(self.client_, url, {"planned_hours": "20"}), 400, "amendment_reason"
        )
        item.refresh_from_db()
        self.assertEqual(item.planned_hours, Decimal("12"))
        answer = patch(
            self.client_, url, {"planned_hours": "20", "amendment_reason": "longer inputs"}
        )
        self.assertEqual(answer.status_code, 200, answer.content)
        amendment = Amendment.objects.get(item=item)
        self.assertEqual(amendment.reason, "longer inputs")
        self.assertEqual(amendment.changes["after"], {"planned_hours": "20.00"})
        # Removed never: a committed item is cut with a decision.
        self.assert_refused(self.client_.delete(url), 409)
        self.assertTrue(PlannedItem.objects.filter(pk=item.pk).exists())

    def test_a_closed_campaign_takes_no_item_change(self) -> None:
        Campaign.objects.filter(pk=self.committed.pk).update(status="closed")
        item = self.item(self.committed)
        url = self.url(self.committed, f"variants/{item.pk}/")
        answer = patch(self.client_, url, {"planned_hours": "20", "amendment_reason": "why"})
        self.assert_refused(answer, 409)

    def test_bad_item_input_names_the_field(self) -> None:
        url = self.url(self.draft, f"variants/{self.item(self.draft).pk}/")
        self.assert_refused(patch(self.client_, url, {"epochs": 0}), 400, "epochs")
        self.assert_refused(patch(self.client_, url, {"name": "baseline"}), 400, "name")
        self.assert_refused(patch(self.client_, url, {"role": "other"}), 400, "role")

    def test_items_of_other_teams_and_campaigns_are_not_found_and_viewers_read_only(self) -> None:
        item = self.item(self.draft)
        url = self.url(self.draft, f"variants/{item.pk}/")
        self.assert_refused(patch(as_user(self.outsider), url, {"rationale": "x"}), 404)
        self.assert_refused(as_user(self.outsider).delete(url), 404)
        other = self.url(self.committed, f"variants/{item.pk}/")  # item of another campaign
        self.assert_refused(patch(self.client_, other, {"rationale": "x"}), 404)
        self.assert_refused(patch(as_user(self.viewer), url, {"rationale": "x"}), 403)
        self.assert_refused(as_user(self.viewer).delete(url), 403)
        self.assertEqual(as_user(self.viewer).get(url).status_code, 200)
        raw = issue_ingest_key(campaign=self.draft)[1]
        self.assert_refused(as_key(raw).delete(url), 403)

    # --- stages ----------------------------------------------------------------------------

    def test_a_draft_stage_is_changed_and_removed(self) -> None:
        stage = self.draft.stages.get()
        before = Stage.objects.create(
            campaign=self.draft, name="setup", kind="setup", planned_hours=Decimal(1)
        )
        url = self.url(self.draft, f"stages/{stage.pk}/")
        item = self.item(self.draft, "baseline")
        answer = patch(
            self.client_,
            url,
            {"planned_hours": "30", "variant": item.pk, "depends_on": [before.pk]},
        )
        self.assertEqual(answer.status_code, 200, answer.content)
        stage.refresh_from_db()
        self.assertEqual((stage.planned_hours, stage.variant_id), (Decimal("30"), item.pk))
        self.assertEqual([s.pk for s in stage.depends_on.all()], [before.pk])
        self.assertEqual(self.client_.delete(url).status_code, 204)
        self.assertFalse(Stage.objects.filter(pk=stage.pk).exists())

    def test_stages_are_frozen_after_commit(self) -> None:
        stage = self.committed.stages.get()
        url = self.url(self.committed, f"stages/{stage.pk}/")
        # The state conflict before the body's shape.
        self.assert_refused(patch(self.client_, url, {"planned_hours": "junk"}), 409)
        self.assert_refused(self.client_.delete(url), 409)
        self.assertTrue(Stage.objects.filter(pk=stage.pk).exists())

    def test_bad_stage_input_names_the_field_and_other_teams_get_404(self) -> None:
        stage = self.draft.stages.get()
        url = self.url(self.draft, f"stages/{stage.pk}/")
        self.assert_refused(patch(self.client_, url, {"planned_hours": "-1"}), 400, "planned_hours")
        self.assert_refused(patch(self.client_, url, {"depends_on": [stage.pk]}), 400, "depends_on")
        foreign = self.committed.stages.get().pk
        self.assert_refused(patch(self.client_, url, {"depends_on": [foreign]}), 400, "depends_on")
        self.assert_refused(as_user(self.outsider).delete(url), 404)
        self.assert_refused(as_user(self.viewer).delete(url), 403)

    # --- stop rules ------------------------------------------------------------------------

    def test_a_draft_stop_rule_is_changed_and_removed(self) -> None:
        rule = StopRule.objects.get(campaign=self.draft)
        url = self.url(self.draft, f"stop-rules/{rule.pk}/")
        answer = patch(self.client_, url, {"description": "NaN or Inf in the loss"})
        self.assertEqual(answer.status_code, 200, answer.content)
        rule.refresh_from_db()
        self.assertEqual(rule.description, "NaN or Inf in the loss")
        self.assertEqual(self.client_.delete(url).status_code, 204)
        self.assertFalse(StopRule.objects.filter(pk=rule.pk).exists())

    def test_stop_rules_are_frozen_after_commit_and_bad_input_names_the_field(self) -> None:
        rule = StopRule.objects.filter(campaign=self.committed).first()
        assert rule is not None
        url = self.url(self.committed, f"stop-rules/{rule.pk}/")
        self.assert_refused(self.client_.delete(url), 409)
        self.assert_refused(patch(self.client_, url, {"description": "x"}), 409)
        draft_rule = StopRule.objects.get(campaign=self.draft)
        draft_url = self.url(self.draft, f"stop-rules/{draft_rule.pk}/")
        self.assert_refused(patch(self.client_, draft_url, {"kind": "junk"}), 400, "kind")
        self.assert_refused(as_user(self.outsider).delete(draft_url), 404)
        self.assert_refused(as_user(self.viewer).delete(draft_url), 403)

    # --- lots ------------------------------------------------------------------------------

    def test_lots_are_reserved_changed_and_released_while_drafting(self) -> None:
        url = self.url(self.draft, "lots/")
        answer = post(self.client_, url, {"plan": self.plan.pk, "quantity": 2})
        self.assertEqual(answer.status_code, 201, answer.content)
        body = answer.json()
        self.assertEqual((body["plan"], body["quantity"]), (self.plan.pk, 2))
        self.assertEqual(body["total_price"], str(self.plan.price * 2))
        self.assertEqual(
            [lot["id"] for lot in self.client_.get(url).json()["results"]], [body["id"]]
        )
        detail = self.url(self.draft, f"lots/{body['id']}/")
        self.assertEqual(patch(self.client_, detail, {"quantity": 3}).json()["quantity"], 3)
        self.assertEqual(self.client_.delete(detail).status_code, 204)
        self.assertFalse(LotReservation.objects.filter(pk=body["id"]).exists())

    def test_lots_are_frozen_after_commit_and_bad_input_names_the_field(self) -> None:
        lot = LotReservation.objects.create(campaign=self.draft, plan=self.plan, quantity=1)
        self.assert_refused(
            post(self.client_, self.url(self.draft, "lots/"), {"plan": 0}), 400, "plan"
        )
        self.assert_refused(
            post(
                self.client_, self.url(self.draft, "lots/"), {"plan": self.plan.pk, "quantity": 0}
            ),
            400,
            "quantity",
        )
        self.assert_refused(
            post(self.client_, self.url(self.committed, "lots/"), {"plan": self.plan.pk}), 409
        )
        committed_lot = LotReservation.objects.create(
            campaign=self.committed, plan=self.plan, quantity=1
        )
        self.assert_refused(
            self.client_.delete(self.url(self.committed, f"lots/{committed_lot.pk}/")), 409
        )
        detail = self.url(self.draft, f"lots/{lot.pk}/")
        self.assert_refused(as_user(self.outsider).delete(detail), 404)
        self.assert_refused(as_user(self.outsider).get(self.url(self.draft, "lots/")), 404)
        self.assert_refused(as_user(self.viewer).delete(detail), 403)

    # --- ingest keys -----------------------------------------------------------------------

    def test_owners_revoke_one_ingest_key(self) -> None:
        key, raw = issue_ingest_key(campaign=self.committed)
        sibling, _ = issue_ingest_key(campaign=self.committed)
        url = self.url(self.committed, f"ingest-keys/{key.pk}/")
        self.assert_refused(as_user(self.planner).delete(url), 403)
        self.assert_refused(as_user(self.viewer).delete(url), 403)
        self.assert_refused(as_user(self.outsider).delete(url), 404)
        self.assert_refused(as_key(raw).delete(url), 403)
        self.assertEqual(as_user(self.owner).delete(url).status_code, 204)
        key.refresh_from_db()
        sibling.refresh_from_db()
        self.assertIsNotNone(key.revoked_at)
        self.assertIsNone(sibling.revoked_at)
        self.assertEqual(as_key(raw).get(self.url(self.committed, "")).status_code, 401)
        self.assertEqual(as_user(self.owner).delete(url).status_code, 204)  # again: no change
        other = self.url(self.draft, f"ingest-keys/{sibling.pk}/")  # not this campaign's key
        self.assert_refused(as_user(self.owner).delete(other), 404)

from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction
from django.test import TestCase

from campaigns.models import (
    Amendment,
    CampaignStatus,
    CommitRefused,
    PlanBaseline,
    PlanFrozen,
    PlannedItem,
    StopRule,
    Team,
)
from campaigns.services.decisions import record_decision
from campaigns.services.items import amend_item
from campaigns.services.plans import commit_plan
from campaigns.tests.factories import make_campaign, make_plannable, make_user
from catalog.models import RentalPlan
from ledger.models import LedgerEntry


class CommitTests(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.user = make_user("ana", team=cls.team)

    def test_it_refuses_a_campaign_without_a_mandatory_item_and_says_so(self) -> None:
        campaign = make_campaign(self.team)
        StopRule.objects.create(campaign=campaign, kind="non_finite_loss")
        PlannedItem.objects.create(campaign=campaign, name="x", tier="exploratory")
        with self.assertRaises(CommitRefused) as refused:
            commit_plan(campaign=campaign, acting_user=self.user)
        self.assertEqual(refused.exception.problems, ["the plan needs at least one mandatory item"])
        campaign.refresh_from_db()
        self.assertEqual(campaign.status, CampaignStatus.DRAFT)
        self.assertFalse(PlanBaseline.objects.filter(campaign=campaign).exists())

    def test_it_refuses_a_campaign_without_a_stop_rule_and_says_so(self) -> None:
        campaign = make_campaign(self.team)
        PlannedItem.objects.create(campaign=campaign, name="baseline", tier="mandatory")
        with self.assertRaises(CommitRefused) as refused:
            commit_plan(campaign=campaign, acting_user=self.user)
        self.assertIn("stop rule", str(refused.exception))
        self.assertNotIn("mandatory", str(refused.exception))

    def test_it_names_both_problems_when_both_are_missing(self) -> None:
        campaign = make_campaign(self.team)
        with self.assertRaises(CommitRefused) as refused:
            commit_plan(campaign=campaign, acting_user=self.user)
        self.assertEqual(len(refused.exception.problems), 2)

    def test_it_refuses_a_lot_priced_in_another_currency_than_the_campaign(self) -> None:
        campaign = make_plannable(self.team, currency="EUR")
        campaign.lots.create(plan=RentalPlan.objects.get(name="RTX 4090, 3 days"))
        with self.assertRaises(CommitRefused) as refused:
            commit_plan(campaign=campaign, acting_user=self.user)
        self.assertEqual(
            refused.exception.problems,
            ["the lot IteraGPU RTX 4090, 3 days is priced in USD, the campaign in EUR"],
        )
        self.assertFalse(LedgerEntry.objects.filter(campaign=campaign).exists())

    def test_commit_freezes_a_snapshot_of_items_rules_stages_and_window(self) -> None:
        campaign = make_plannable(self.team)
        baseline = commit_plan(campaign=campaign, acting_user=self.user)
        campaign.refresh_from_db()
        self.assertEqual(campaign.status, CampaignStatus.COMMITTED)
        self.assertEqual(campaign.committed_by, self.user)
        snap = baseline.snapshot
        self.assertEqual(snap["window_hours"], "72.00")
        self.assertEqual([i["name"] for i in snap["items"]], ["baseline", "variant A"])
        self.assertEqual(snap["stop_rules"][0]["kind"], "non_finite_loss")
        self.assertEqual(snap["stages"][0]["planned_hours"], "22.00")

    def test_a_second_commit_is_refused_and_posts_nothing_twice(self) -> None:
        campaign = make_plannable(self.team)
        plan = RentalPlan.objects.get(name="RTX 4090, 3 days")
        campaign.lots.create(plan=plan, quantity=2)
        commit_plan(campaign=campaign, acting_user=self.user)
        with self.assertRaises(PlanFrozen):
            commit_plan(campaign=campaign, acting_user=self.user)
        entries = LedgerEntry.objects.filter(campaign=campaign)
        self.assertEqual(entries.count(), 1)
        self.assertEqual(entries.get().amount, Decimal("94.28"))

    def test_the_snapshot_is_unchanged_after_the_items_are_amended(self) -> None:
        campaign = make_plannable(self.team)
        baseline = commit_plan(campaign=campaign, acting_user=self.user)
        frozen = dict(baseline.snapshot)
        item = campaign.items.get(name="variant A")
        amendment = amend_item(
            item=item, reason="pilot was slower", acting_user=self.user, planned_hours=Decimal("20")
        )
        item.refresh_from_db()
        self.assertEqual(item.planned_hours, Decimal("20"))
        self.assertEqual(PlanBaseline.objects.get(pk=baseline.pk).snapshot, frozen)
        self.assertEqual(amendment.changes["before"]["planned_hours"], "12.00")
        self.assertEqual(amendment.changes["after"]["planned_hours"], "20")
        self.assertEqual(Amendment.objects.filter(campaign=campaign).count(), 1)

    def test_a_committed_item_cannot_change_without_an_amendment_reason(self) -> None:
        campaign = make_plannable(self.team)
        commit_plan(campaign=campaign, acting_user=self.user)
        item = campaign.items.get(name="variant A")
        item.planned_hours = Decimal("30")
        with self.assertRaises(PlanFrozen):
            item.save()
        with self.assertRaises(ValidationError):
            amend_item(item=item, reason="  ", planned_hours=Decimal("30"))
        with self.assertRaises(PlanFrozen):
            campaign.items.get(name="baseline").delete()

    def test_the_baseline_is_never_rewritten_by_the_model(self) -> None:
        campaign = make_plannable(self.team)
        baseline = commit_plan(campaign=campaign, acting_user=self.user)
        baseline.snapshot = {"rewritten": True}
        with self.assertRaises(PlanFrozen):
            baseline.save()
        with self.assertRaises(PlanFrozen):
            baseline.delete()

    def test_stop_rules_are_immutable_once_the_plan_is_committed(self) -> None:
        campaign = make_plannable(self.team)
        commit_plan(campaign=campaign, acting_user=self.user)
        rule = campaign.stop_rules.get()
        rule.threshold = 3.0
        with self.assertRaises(PlanFrozen):
            rule.save()
        with self.assertRaises(PlanFrozen):
            rule.delete()
        with self.assertRaises(PlanFrozen):
            StopRule.objects.create(campaign=campaign, kind="custom", description="late rule")
        self.assertEqual(campaign.stop_rules.count(), 1)

    def test_a_threshold_rule_needs_its_metric_comparator_and_threshold(self) -> None:
        campaign = make_campaign(self.team)
        rule = StopRule(campaign=campaign, kind="metric_threshold")
        with self.assertRaises(ValidationError) as err:
            rule.full_clean()
        self.assertEqual(set(err.exception.message_dict), {"metric", "comparator", "threshold"})

    def test_an_unknown_tier_or_role_is_refused(self) -> None:
        campaign = make_campaign(self.team)
        with self.assertRaises(ValidationError) as err:
            PlannedItem(campaign=campaign, name="x", tier="someday", role="wizard").full_clean()
        self.assertEqual(set(err.exception.message_dict), {"tier", "role"})
        # The database refuses what skips the form too.
        with self.assertRaises(IntegrityError), transaction.atomic():
            PlannedItem.objects.create(campaign=campaign, name="y", tier="someday")

    def test_a_cut_decision_keeps_the_row_and_marks_it_cut(self) -> None:
        campaign = make_plannable(self.team)
        variant = campaign.items.get(name="variant A")
        decision = record_decision(
            campaign=campaign,
            outcome="cut",
            rationale="pilot 3x slower",
            acting_user=self.user,
            cut_variants=[variant],
        )
        variant.refresh_from_db()
        self.assertEqual(variant.status, "cut")
        self.assertEqual(decision.decided_by, self.user)
        self.assertIsNotNone(decision.decided_at)

    def test_a_mandatory_item_cannot_be_cut(self) -> None:
        campaign = make_plannable(self.team)
        with self.assertRaises(ValidationError):
            record_decision(
                campaign=campaign,
                outcome="cut",
                rationale="x",
                cut_variants=[campaign.items.get(name="baseline")],
            )


@pytest.mark.postgres
class DatabaseLevelFreezeTests(TestCase):
    def test_postgres_itself_refuses_to_rewrite_a_baseline(self) -> None:
        team = Team.objects.create(name="db")
        campaign = make_plannable(team)
        baseline = commit_plan(campaign=campaign)
        with self.assertRaises(Exception) as err, transaction.atomic():
            PlanBaseline.objects.filter(pk=baseline.pk).update(snapshot={"x": 1})
        self.assertIn("Cannot update or delete", str(err.exception))
        self.assertEqual(connection.vendor, "postgresql")

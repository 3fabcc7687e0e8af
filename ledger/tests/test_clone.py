"""Planning the next campaign from this one: same plan, hours × this campaign's own lessons, or
the team's median where 3 observations say so, each figure saying where it came from, and what
this one left open inherited (docs/domain.md §21)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.test import TestCase
from django.urls import reverse

from campaigns.models import Campaign, DecisionPoint, PlannedItem, Stage, Team
from campaigns.services.plans import commit_plan
from campaigns.tests.factories import as_user, committed_campaign, make_plannable, make_user
from ledger.models import Deliverable


def observed(team: Team, title: str, hours: str) -> Campaign:
    campaign = make_plannable(team, title=title)
    Stage.objects.filter(campaign=campaign).update(resource="rtx4090-a")
    commit_plan(campaign=campaign)
    Stage.objects.filter(campaign=campaign).update(observed_hours=Decimal(hours))
    return campaign


@pytest.mark.postgres
class CloneTests(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.planner = make_user("pia", team=cls.team)
        cls.viewer = make_user("vic", team=cls.team, role="viewer")
        cls.outsider = make_user("otto", team=Team.objects.create(name="vision"))
        cls.campaign = committed_campaign(cls.team)  # 22 h training stage, one lot
        Stage.objects.filter(campaign=cls.campaign).update(
            resource="rtx4090-a",
            observed_hours=Decimal("30"),
            deviation_note="long inputs took 8 h more to tokenize",
        )
        cut = PlannedItem.objects.get(campaign=cls.campaign, name="variant A")
        decision = DecisionPoint.objects.create(
            campaign=cls.campaign, label="after the pilot", outcome="cut", rationale="too slow"
        )
        decision.cut_variants.set([cut])
        PlannedItem.objects.filter(pk=cut.pk).update(status="cut")
        Deliverable.objects.create(
            campaign=cls.campaign,
            kind="predictions",
            corpus_name="tickets",
            corpus_revision="abc123",
            accepted=False,
            rejection_reasons=["expected ids missing"],
        )

    def clone(self, user: object | None = None) -> dict:
        answer = as_user(user or self.planner).post(
            f"/api/v1/campaigns/{self.campaign.pk}/clone/", {}, format="json"
        )
        self.assertEqual(answer.status_code, 201, answer.content)
        return answer.json()

    def test_the_clone_is_a_draft_with_the_plan_and_the_inherited_uncertainties(self) -> None:
        body = self.clone()
        self.assertEqual((body["status"], body["planned_from"]), ("draft", self.campaign.pk))
        clone = Campaign.objects.get(pk=body["id"])
        self.assertEqual(list(clone.items.values_list("name", flat=True)), ["baseline"])
        self.assertEqual(clone.stop_rules.count(), self.campaign.stop_rules.count())
        self.assertEqual(
            [(lot.plan_id, lot.quantity) for lot in clone.lots.all()],
            [(lot.plan_id, lot.quantity) for lot in self.campaign.lots.all()],
        )
        kinds = {(u["kind"], u["subject"]) for u in body["inherited_uncertainties"]}
        self.assertIn(("deviation", "train"), kinds)
        self.assertIn(("cut_item", "variant A"), kinds)
        self.assertTrue(any(k == "failed_check" for k, _ in kinds))
        # One observation is no team calibration: this campaign's own lesson applies, 30 h
        # observed for 22 h committed (×1.36): 22 × 1.36 = 29.92 h.
        self.assertEqual(clone.stages.get().planned_hours, Decimal("29.92"))
        [row] = [u for u in body["inherited_uncertainties"] if u["kind"] == "calibrated_hours"]
        self.assertEqual(row["subject"], "stage train")
        self.assertIn(
            "22.00 h planned before × 1.36 (this campaign: training took ×1.36", row["text"]
        )
        # The baseline names no GPU and no stage: nothing was learnt of it, its hours stay.
        self.assertEqual(clone.items.get().planned_hours, Decimal("10.00"))
        kept = [u for u in body["inherited_uncertainties"] if u["kind"] == "planned_hours"]
        self.assertEqual([u["subject"] for u in kept], ["baseline"])
        self.assertEqual(self.campaign.items.count(), 2)  # the predecessor is untouched
        self.assertEqual(self.campaign.stages.get().planned_hours, Decimal("22.00"))

    def test_from_three_observations_the_team_median_wins_and_is_applied_once(self) -> None:
        observed(self.team, "second", "26.4")  # ratio 1.2
        observed(self.team, "third", "28.6")  # ratio 1.3; with this one's 30/22: median 1.3
        body = self.clone()
        clone = Campaign.objects.get(pk=body["id"])
        self.assertEqual(clone.stages.get().planned_hours, Decimal("28.60"))
        [row] = [u for u in body["inherited_uncertainties"] if u["kind"] == "calibrated_hours"]
        self.assertIn("22.00 h planned before × 1.30", row["text"])
        self.assertIn("= 28.60 h calibrated", row["text"])
        self.assertIn("third", row["text"])
        self.assertIn("spread ×1.20–×1.36", row["text"])
        [stage] = [p for p in body["provenance"] if p["subject"] == "stage"]
        self.assertEqual(
            (stage["planned_before"], stage["ratio"], stage["hours"], stage["source"]),
            ("22.00", "1.3000", "28.60", "team"),
        )
        self.assertEqual(stage["count"], 3)
        # The clone's forecast applies no calibration on top: its calendar is the 28.60 h.
        from estimates.selectors.timeline import campaign_forecast

        self.assertAlmostEqual(campaign_forecast(clone).timeline.hours, 28.6)

    def test_viewers_and_other_teams_cannot_clone(self) -> None:
        url = f"/api/v1/campaigns/{self.campaign.pk}/clone/"
        self.assertEqual(as_user(self.viewer).post(url, {}, format="json").status_code, 403)
        self.assertEqual(as_user(self.outsider).post(url, {}, format="json").status_code, 404)
        self.assertEqual(Campaign.objects.filter(planned_from=self.campaign).count(), 0)

    def test_the_admin_action_plans_the_next_campaign_and_the_page_shows_what_it_inherited(
        self,
    ) -> None:
        self.client.force_login(self.planner)
        answer = self.client.post(
            reverse("admin:campaigns_campaign_changelist"),
            {"action": "plan_next_campaign", "_selected_action": [self.campaign.pk]},
            follow=True,
        )
        self.assertEqual(answer.status_code, 200)
        clone = Campaign.objects.get(planned_from=self.campaign)
        self.assertContains(answer, "inherited uncertainties")
        page = self.client.get(reverse("admin:campaigns_campaign_change", args=[clone.pk]))
        self.assertContains(page, 'id="inherited-uncertainties"')
        self.assertContains(page, "long inputs took 8 h more to tokenize")

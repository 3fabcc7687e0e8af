"""Campaign planning through the API: the same rules as the admin (docs/api.md, "Campaign
planning")."""

from __future__ import annotations

from decimal import Decimal

from django.test import TestCase

from campaigns.models import (
    Amendment,
    Campaign,
    CampaignStatus,
    DecisionPoint,
    PlannedItem,
    Stage,
    StopRule,
    Team,
)
from campaigns.services.plans import commit_plan
from campaigns.tests.factories import as_user, make_campaign, make_plannable, make_user, patch, post

NEW_CAMPAIGN = {
    "title": "LoRA vs full fine-tuning",
    "question": "Does LoRA r16 beat the baseline by 1 F1 on tickets?",
    "corpus": {"name": "tickets", "revision": "abc123"},
    "window_hours": "72",
    "budget": "110.00",
    "currency": "USD",
}


class CreatingAndEditingCampaigns(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.planner = make_user("pia", team=cls.team, role="planner")

    def setUp(self) -> None:
        self.desk = as_user(self.planner)

    def test_a_planner_creates_a_campaign_in_their_only_team(self) -> None:
        answer = post(self.desk, "/api/v1/campaigns/", NEW_CAMPAIGN)
        self.assertEqual(answer.status_code, 201, answer.content)
        body = answer.json()
        self.assertEqual(body["corpus"], {"name": "tickets", "revision": "abc123"})
        self.assertEqual(
            (body["budget"], body["status"], body["team"]), ("110.00", "draft", self.team.pk)
        )
        campaign = Campaign.objects.get(pk=body["id"])
        self.assertEqual((campaign.corpus_name, campaign.corpus_revision), ("tickets", "abc123"))
        self.assertEqual(campaign.created_by, self.planner)

    def test_money_is_a_decimal_string_and_a_json_float_is_refused(self) -> None:
        for budget in (110.5, 110, "11O.00", "-5.00"):
            with self.subTest(budget=budget):
                answer = post(self.desk, "/api/v1/campaigns/", {**NEW_CAMPAIGN, "budget": budget})
                self.assertEqual(answer.status_code, 400)
                self.assertIn("budget", answer.json())
        self.assertFalse(Campaign.objects.exists())

    def test_it_names_each_bad_field(self) -> None:
        for change, field in [
            ({"window_hours": "-1"}, "window_hours"),
            ({"currency": "usd"}, "currency"),
            ({"corpus": {"name": "tickets"}}, "corpus"),
            ({"title": ""}, "title"),
            ({"required_checkpoint_components": ["weights"]}, "required_checkpoint_components"),
            ({"team": 999_999}, "team"),
        ]:
            with self.subTest(change=change):
                answer = post(self.desk, "/api/v1/campaigns/", {**NEW_CAMPAIGN, **change})
                self.assertEqual(answer.status_code, 400)
                self.assertIn(field, answer.json())

    def test_a_member_of_several_teams_says_which_team(self) -> None:
        other = Team.objects.create(name="vision")
        other.memberships.create(user=self.planner, role="planner")
        answer = post(self.desk, "/api/v1/campaigns/", NEW_CAMPAIGN)
        self.assertEqual(answer.status_code, 400)
        self.assertIn("team", answer.json())
        answer = post(self.desk, "/api/v1/campaigns/", {**NEW_CAMPAIGN, "team": other.pk})
        self.assertEqual(answer.json()["team"], other.pk)

    def test_a_draft_is_edited_with_patch(self) -> None:
        campaign = make_campaign(self.team)
        answer = patch(
            self.desk,
            f"/api/v1/campaigns/{campaign.pk}/",
            {"corpus": {"revision": "def456"}, "budget": "95.50"},
        )
        self.assertEqual(answer.status_code, 200, answer.content)
        campaign.refresh_from_db()
        self.assertEqual((campaign.corpus_name, campaign.corpus_revision), ("tickets", "def456"))
        self.assertEqual(campaign.budget, Decimal("95.50"))

    def test_a_committed_campaign_refuses_patch_with_409(self) -> None:
        campaign = make_plannable(self.team)
        commit_plan(campaign=campaign, acting_user=self.planner)
        answer = patch(self.desk, f"/api/v1/campaigns/{campaign.pk}/", {"title": "renamed"})
        self.assertEqual(answer.status_code, 409)
        campaign.refresh_from_db()
        self.assertNotEqual(campaign.title, "renamed")

    def test_put_and_delete_are_405(self) -> None:
        campaign = make_campaign(self.team)
        url = f"/api/v1/campaigns/{campaign.pk}/"
        self.assertEqual(self.desk.put(url, {}, format="json").status_code, 405)
        self.assertEqual(self.desk.delete(url).status_code, 405)
        self.assertTrue(Campaign.objects.filter(pk=campaign.pk).exists())


class CommittingThePlan(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.planner = make_user("pia", team=cls.team, role="planner")

    def setUp(self) -> None:
        self.desk = as_user(self.planner)

    def test_commit_is_refused_with_409_naming_the_missing_requirements(self) -> None:
        campaign = make_campaign(self.team)
        answer = post(self.desk, f"/api/v1/campaigns/{campaign.pk}/commit/")
        self.assertEqual(answer.status_code, 409)
        problems = answer.json()["problems"]
        self.assertEqual(len(problems), 2)
        self.assertTrue(any("mandatory item" in p for p in problems))
        self.assertTrue(any("stop rule" in p for p in problems))
        campaign.refresh_from_db()
        self.assertEqual(campaign.status, CampaignStatus.DRAFT)

    def test_commit_freezes_the_plan_once(self) -> None:
        campaign = make_plannable(self.team)
        answer = post(self.desk, f"/api/v1/campaigns/{campaign.pk}/commit/")
        self.assertEqual(answer.status_code, 200, answer.content)
        self.assertEqual(answer.json()["status"], "committed")
        self.assertEqual(len(answer.json()["baseline_digest"]), 64)
        again = post(self.desk, f"/api/v1/campaigns/{campaign.pk}/commit/")
        self.assertEqual(again.status_code, 409)


class ItemsRulesDecisionsAndStages(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.planner = make_user("pia", team=cls.team, role="planner")

    def setUp(self) -> None:
        self.desk = as_user(self.planner)
        self.campaign = make_plannable(self.team)
        self.base = f"/api/v1/campaigns/{self.campaign.pk}/"

    def test_variants_are_listed_and_added_while_drafting(self) -> None:
        answer = post(
            self.desk,
            self.base + "variants/",
            {"name": "variant B", "role": "variant", "tier": "exploratory", "config": {"r": 64}},
        )
        self.assertEqual(answer.status_code, 201, answer.content)
        names = [i["name"] for i in self.desk.get(self.base + "variants/").json()["results"]]
        self.assertEqual(names, ["baseline", "variant A", "variant B"])

    def test_an_item_name_is_unique_in_its_campaign(self) -> None:
        answer = post(self.desk, self.base + "variants/", {"name": "baseline"})
        self.assertEqual(answer.status_code, 400)
        self.assertIn("name", answer.json())

    def test_after_commit_an_item_is_an_amendment_with_a_reason(self) -> None:
        commit_plan(campaign=self.campaign, acting_user=self.planner)
        refused = post(self.desk, self.base + "variants/", {"name": "variant C"})
        self.assertEqual(refused.status_code, 400)
        self.assertIn("amendment_reason", refused.json())
        added = post(
            self.desk,
            self.base + "variants/",
            {"name": "variant C", "tier": "useful", "amendment_reason": "the pilot showed a gap"},
        )
        self.assertEqual(added.status_code, 201, added.content)
        amendment = Amendment.objects.get(item_id=added.json()["id"])
        self.assertEqual(amendment.reason, "the pilot showed a gap")
        self.assertEqual(amendment.made_by, self.planner)

    def test_stop_rules_are_checked_and_refused_after_commit(self) -> None:
        incomplete = post(self.desk, self.base + "stop-rules/", {"kind": "metric_threshold"})
        self.assertEqual(incomplete.status_code, 400)
        self.assertEqual(set(incomplete.json()), {"metric", "comparator", "threshold"})
        nan = post(
            self.desk,
            self.base + "stop-rules/",
            {"kind": "metric_threshold", "metric": "f1", "comparator": "lt", "threshold": "NaN"},
        )
        self.assertIn("threshold", nan.json())
        good = post(
            self.desk,
            self.base + "stop-rules/",
            {"kind": "metric_threshold", "metric": "f1", "comparator": "lt", "threshold": 0.2},
        )
        self.assertEqual(good.status_code, 201, good.content)
        commit_plan(campaign=self.campaign, acting_user=self.planner)
        frozen = post(self.desk, self.base + "stop-rules/", {"kind": "input_truncated"})
        self.assertEqual(frozen.status_code, 409)
        self.assertEqual(StopRule.objects.filter(campaign=self.campaign).count(), 2)

    def test_a_decision_cuts_an_optional_variant_and_says_who_and_why(self) -> None:
        variant = self.campaign.items.get(name="variant A")
        answer = post(
            self.desk,
            self.base + "decisions/",
            {"outcome": "cut", "rationale": "B answers it", "cut_variants": [variant.pk]},
        )
        self.assertEqual(answer.status_code, 201, answer.content)
        self.assertEqual(answer.json()["decided_by"], "pia")
        variant.refresh_from_db()
        self.assertEqual(variant.status, "cut")

    def test_a_decision_cannot_cut_a_mandatory_item_or_another_campaigns_item(self) -> None:
        mandatory = self.campaign.items.get(name="baseline")
        foreign = make_plannable(self.team, title="other").items.get(name="variant A")
        for cut in ([mandatory.pk], [foreign.pk], []):
            with self.subTest(cut=cut):
                answer = post(
                    self.desk,
                    self.base + "decisions/",
                    {"outcome": "cut", "rationale": "why not", "cut_variants": cut},
                )
                self.assertEqual(answer.status_code, 400)
                self.assertIn("cut_variants", answer.json())
        self.assertFalse(DecisionPoint.objects.exclude(outcome="pending").exists())
        self.assertFalse(PlannedItem.objects.filter(status="cut").exists())

    def test_stages_are_planned_with_their_dependencies_while_drafting(self) -> None:
        train = Stage.objects.get(campaign=self.campaign)
        answer = post(
            self.desk,
            self.base + "stages/",
            {
                "name": "validate",
                "kind": "validation",
                "resource": "gpu-a",
                "planned_hours": "2",
                "depends_on": [train.pk],
            },
        )
        self.assertEqual(answer.status_code, 201, answer.content)
        self.assertEqual(answer.json()["depends_on"], [train.pk])
        no_gpu = post(self.desk, self.base + "stages/", {"name": "x", "kind": "training"})
        self.assertIn("resource", no_gpu.json())
        commit_plan(campaign=self.campaign, acting_user=self.planner)
        frozen = post(
            self.desk, self.base + "stages/", {"name": "y", "kind": "setup", "machine": False}
        )
        self.assertEqual(frozen.status_code, 409)


class BrowsingWithASession(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.planner = make_user("pia", team=cls.team, role="planner")
        cls.campaign = make_plannable(cls.team)

    def test_the_browsable_api_and_the_docs_open_from_an_admin_session(self) -> None:
        self.client.force_login(self.planner)
        base = f"/api/v1/campaigns/{self.campaign.pk}/"
        for url in ("/api/v1/campaigns/", base, base + "variants/", base + "runs/"):
            with self.subTest(url=url):
                page = self.client.get(url, headers={"Accept": "text/html"})
                self.assertEqual(page.status_code, 200)
                self.assertIn(b"Django REST framework", page.content)
        self.assertEqual(self.client.get("/api/v1/docs/").status_code, 200)
        schema = self.client.get("/api/v1/schema/", headers={"Accept": "application/json"})
        self.assertIn("/api/v1/runs/{run_id}/metrics/", schema.json()["paths"])

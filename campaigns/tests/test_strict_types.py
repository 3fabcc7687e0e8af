"""Each field takes the JSON type its schema states, and only that one (campaigns/api/fields.py,
"Strict JSON types"): DRF alone would store 0 as the text "0", read 1 or "false" as a boolean,
"5" as the integer 5 and {} as an empty list of ids. Each slip is a 400 naming the field, and
nothing is written."""

from __future__ import annotations

from typing import Any

from django.test import TestCase

from campaigns.models import Campaign, Checkpoint, Stage, StopRule, Team, ThroughputSample
from campaigns.tests.factories import (
    as_key,
    as_user,
    committed_campaign,
    ingest_key,
    make_campaign,
    make_user,
    patch,
    post,
)


class PlanningFieldsTakeTheirOwnType(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.owner = make_user("olga", team=cls.team, role="owner")
        cls.draft = make_campaign(cls.team, title="a draft")

    def setUp(self) -> None:
        self.desk = as_user(self.owner)
        self.base = f"/api/v1/campaigns/{self.draft.pk}/"

    def assert_refused(self, answer: Any, field: str) -> None:
        self.assertEqual(answer.status_code, 400, answer.content)
        self.assertIn(field, answer.json())

    def test_it_refuses_a_number_or_boolean_for_a_text_field(self) -> None:
        for value in [0, 1.5, True]:
            with self.subTest(value=value):
                body = {"kind": "custom", "description": value}
                self.assert_refused(post(self.desk, self.base + "stop-rules/", body), "description")
        self.assertFalse(StopRule.objects.filter(campaign=self.draft).exists())

    def test_it_refuses_a_number_for_a_model_text_field_in_a_patch(self) -> None:
        self.assert_refused(
            patch(self.desk, self.base, {"decision_threshold": 0}), "decision_threshold"
        )
        self.draft.refresh_from_db()
        self.assertNotEqual(self.draft.decision_threshold, "0")

    def test_it_refuses_0_1_and_boolean_words_for_a_boolean(self) -> None:
        for value in [0, 1, "true", "false", "yes"]:
            with self.subTest(value=value):
                body = {"name": "s", "kind": "setup", "machine": value}
                self.assert_refused(post(self.desk, self.base + "stages/", body), "machine")
        self.assertFalse(Stage.objects.filter(campaign=self.draft).exists())

    def test_it_refuses_an_object_for_a_list_of_ids(self) -> None:
        body = {"name": "s", "kind": "setup", "machine": False, "depends_on": {}}
        self.assert_refused(post(self.desk, self.base + "stages/", body), "depends_on")
        self.assertFalse(Stage.objects.filter(campaign=self.draft).exists())

    def test_it_refuses_an_id_sent_as_a_string(self) -> None:
        body = {
            "team": str(self.team.pk),
            "title": "t",
            "question": "q",
            "corpus": {"name": "tickets", "revision": "abc123"},
        }
        self.assert_refused(post(self.desk, "/api/v1/campaigns/", body), "team")
        self.assertEqual(Campaign.objects.count(), 1)

    def test_a_patch_may_still_change_the_corpus_revision_alone(self) -> None:
        answer = patch(self.desk, self.base, {"corpus": {"revision": "def456"}})
        self.assertEqual(answer.status_code, 200, answer.content)
        self.assertEqual(answer.json()["corpus"]["revision"], "def456")


class RunFieldsTakeTheirOwnType(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.owner = make_user("olga", team=cls.team, role="owner")
        cls.campaign = committed_campaign(cls.team, cls.owner, lots=0, automatic_rules=True)
        cls.raw_key = ingest_key(cls.campaign, cls.owner)

    def setUp(self) -> None:
        self.loop = as_key(self.raw_key)
        started = post(self.loop, f"/api/v1/campaigns/{self.campaign.pk}/runs/", {"run_id": "r-1"})
        self.assertEqual(started.status_code, 201, started.content)

    def test_it_refuses_a_string_of_digits_for_an_integer_and_1_for_a_boolean(self) -> None:
        for body, field in [
            ({"step": "100", "components": ["model"]}, "step"),
            ({"step": True, "components": ["model"]}, "step"),
            ({"step": 100, "components": ["model"], "resume_verified": 1}, "resume_verified"),
        ]:
            with self.subTest(body=body):
                answer = post(self.loop, "/api/v1/runs/r-1/checkpoints/", body)
                self.assertEqual(answer.status_code, 400, answer.content)
                self.assertIn(field, answer.json())
        self.assertFalse(Checkpoint.objects.exists())

    def test_it_refuses_a_numeric_string_for_a_number(self) -> None:
        answer = post(self.loop, "/api/v1/runs/r-1/throughput/", {"tokens_per_second": "2500"})
        self.assertEqual(answer.status_code, 400, answer.content)
        self.assertIn("tokens_per_second", answer.json())
        self.assertFalse(ThroughputSample.objects.exists())

    def test_a_whole_number_written_with_a_point_is_an_integer(self) -> None:
        body = {"step": 100.0, "components": ["model"], "resume_verified": True}
        answer = post(self.loop, "/api/v1/runs/r-1/checkpoints/", body)
        self.assertEqual(answer.status_code, 201, answer.content)
        self.assertEqual(Checkpoint.objects.get().step, 100)


class ThePatchSchemaSaysWhatAPatchTakes(TestCase):
    def test_a_patched_campaign_has_no_team_and_a_corpus_with_nothing_required(self) -> None:
        user = make_user("olga", team=Team.objects.create(name="nlp"), role="owner")
        answer = as_user(user).get(
            "/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json"
        )
        self.assertEqual(answer.status_code, 200)
        schemas = answer.json()["components"]["schemas"]
        self.assertNotIn("team", schemas["PatchedCampaignDetailRequest"]["properties"])
        corpus = schemas["PatchedCampaignDetailRequest"]["properties"]["corpus"]["$ref"].split("/")[
            -1
        ]
        self.assertNotIn("required", schemas[corpus])
        self.assertEqual(schemas["CampaignCorpusRequest"]["required"], ["name", "revision"])

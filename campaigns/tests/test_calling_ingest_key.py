"""`GET /api/v1/ingest-key/` tells an ingest key its own campaign and items, so a loop (and the
README's curl block) reads the ids instead of having them typed in."""

from __future__ import annotations

from django.test import TestCase

from campaigns.models import Team
from campaigns.services.decisions import record_decision
from campaigns.services.keys import issue_ingest_key, revoke_ingest_keys
from campaigns.tests.factories import as_key, as_user, committed_campaign, make_user

URL = "/api/v1/ingest-key/"


class TheCallingIngestKey(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.owner = make_user("olga", team=cls.team, role="owner")
        committed_campaign(cls.team, title="Another one", lots=0)
        cls.campaign = committed_campaign(cls.team, cls.owner, title="Ours", lots=0)
        cls.baseline = cls.campaign.items.get(name="baseline")
        cls.variant = cls.campaign.items.get(name="variant A")

    def test_a_key_reads_its_campaign_and_items(self) -> None:
        _key, raw = issue_ingest_key(campaign=self.campaign, name="ci")
        body = as_key(raw).get(URL).json()
        self.assertEqual(
            body["campaign"], {"id": self.campaign.pk, "title": "Ours", "status": "committed"}
        )
        self.assertEqual([i["id"] for i in body["items"]], [self.baseline.pk, self.variant.pk])
        self.assertEqual(body["items"][0]["role"], "baseline")
        self.assertEqual((body["name"], body["item"], body["kind"]), ("ci", None, ""))
        self.assertEqual(body["prefix"], raw[:12])

    def test_a_bound_key_names_its_item_and_kind_and_cut_items_are_left_out(self) -> None:
        record_decision(
            campaign=self.campaign,
            acting_user=self.owner,
            outcome="cut",
            rationale="the baseline is enough",
            cut_variants=[self.variant],
        )
        _key, raw = issue_ingest_key(campaign=self.campaign, item=self.baseline, kind="full")
        body = as_key(raw).get(URL).json()
        self.assertEqual((body["item"], body["kind"]), (self.baseline.pk, "full"))
        self.assertEqual([i["id"] for i in body["items"]], [self.baseline.pk])

    def test_a_user_is_told_it_describes_a_key(self) -> None:
        answer = as_user(self.owner).get(URL)
        self.assertEqual(answer.status_code, 403)
        self.assertIn("Bearer", answer.json()["detail"])

    def test_a_revoked_key_is_refused_and_a_key_cannot_post_here(self) -> None:
        key, raw = issue_ingest_key(campaign=self.campaign)
        self.assertEqual(as_key(raw).post(URL, {}, format="json").status_code, 403)
        revoke_ingest_keys(campaign=self.campaign, keys=[key])
        self.assertEqual(as_key(raw).get(URL).status_code, 401)

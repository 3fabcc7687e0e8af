"""Ingest keys issued by owners through the API and the management command, bound or not to a
planned item and a run kind (docs/api.md; docs/mlflow.md uses the binding)."""

from __future__ import annotations

from io import StringIO

from django.core.management import CommandError, call_command
from django.test import TestCase

from campaigns.models import IngestKey, Team
from campaigns.tests.factories import (
    as_key,
    as_user,
    committed_campaign,
    ingest_key,
    make_plannable,
    make_user,
    post,
)


class IngestKeysApiTestCase(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.owner = make_user("olga", team=cls.team, role="owner")
        cls.planner = make_user("paul", team=cls.team, role="planner")
        cls.viewer = make_user("vera", team=cls.team, role="viewer")
        cls.campaign = committed_campaign(cls.team, cls.owner, lots=0, automatic_rules=True)
        cls.baseline = cls.campaign.items.get(name="baseline")
        cls.other_team = Team.objects.create(name="vision")
        cls.stranger = make_user("sam", team=cls.other_team, role="owner")
        cls.other_campaign = make_plannable(cls.other_team)
        cls.url = f"/api/v1/campaigns/{cls.campaign.pk}/ingest-keys/"

    def test_an_owner_gets_a_key_shown_once_that_logs_runs(self) -> None:
        response = post(as_user(self.owner), self.url, {"name": "ci"})
        self.assertEqual(response.status_code, 201, response.content)
        body = response.json()
        self.assertTrue(body["key"].startswith("cdk_"))
        self.assertEqual((body["item"], body["kind"], body["name"]), (None, "", "ci"))
        stored = IngestKey.objects.get(pk=body["id"])
        self.assertEqual(stored.digest, IngestKey.hash(body["key"]))
        self.assertNotIn(body["key"], str(stored.__dict__))
        runs = as_key(body["key"]).get("/api/v1/runs/x/")
        self.assertEqual(runs.status_code, 404)  # authenticated (not 401), no such run

    def test_a_key_can_be_bound_to_an_item_and_a_kind(self) -> None:
        body = {"item": self.baseline.pk, "kind": "full"}
        response = post(as_user(self.owner), self.url, body)
        self.assertEqual(response.status_code, 201, response.content)
        key = IngestKey.objects.get(pk=response.json()["id"])
        self.assertEqual((key.item_id, key.kind), (self.baseline.pk, "full"))

    def test_an_item_of_another_campaign_is_refused_naming_item(self) -> None:
        foreign = self.other_campaign.items.first()
        response = post(as_user(self.owner), self.url, {"item": foreign.pk})
        self.assertEqual(response.status_code, 400)
        self.assertIn("item", response.json())
        self.assertFalse(IngestKey.objects.filter(campaign=self.campaign).exists())

    def test_an_unknown_kind_is_refused_naming_kind(self) -> None:
        response = post(as_user(self.owner), self.url, {"kind": "huge"})
        self.assertEqual(response.status_code, 400)
        self.assertIn("kind", response.json())

    def test_planners_viewers_and_ingest_keys_are_forbidden(self) -> None:
        for client in (
            as_user(self.planner),
            as_user(self.viewer),
            as_key(ingest_key(self.campaign)),
        ):
            self.assertEqual(post(client, self.url, {}).status_code, 403)
        self.assertEqual(IngestKey.objects.filter(created_by__isnull=False).count(), 0)

    def test_another_teams_campaign_is_not_found(self) -> None:
        self.assertEqual(post(as_user(self.stranger), self.url, {}).status_code, 404)


class IssueIngestKeyCommandTestCase(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.campaign = make_plannable(cls.team)
        cls.baseline = cls.campaign.items.get(name="baseline")

    def test_it_prints_only_the_key(self) -> None:
        out = StringIO()
        call_command("issue_ingest_key", str(self.campaign.pk), stdout=out)
        raw = out.getvalue().strip()
        key = IngestKey.objects.get(digest=IngestKey.hash(raw))
        self.assertEqual((key.campaign_id, key.item_id, key.kind), (self.campaign.pk, None, ""))

    def test_it_binds_the_item_and_kind(self) -> None:
        out = StringIO()
        call_command(
            "issue_ingest_key",
            str(self.campaign.pk),
            "--item",
            str(self.baseline.pk),
            "--kind",
            "pilot",
            stdout=out,
        )
        key = IngestKey.objects.get(digest=IngestKey.hash(out.getvalue().strip()))
        self.assertEqual((key.item_id, key.kind), (self.baseline.pk, "pilot"))

    def test_it_refuses_an_item_of_another_campaign_or_a_bad_kind(self) -> None:
        other = make_plannable(self.team, title="other")
        with self.assertRaisesMessage(CommandError, "--item"):
            call_command(
                "issue_ingest_key",
                str(self.campaign.pk),
                "--item",
                str(other.items.first().pk),
                stdout=StringIO(),
            )
        with self.assertRaisesMessage(CommandError, "--kind"):
            call_command(
                "issue_ingest_key", str(self.campaign.pk), "--kind", "x", stdout=StringIO()
            )
        with self.assertRaisesMessage(CommandError, "no campaign"):
            call_command("issue_ingest_key", "999999", stdout=StringIO())
        self.assertFalse(IngestKey.objects.exists())

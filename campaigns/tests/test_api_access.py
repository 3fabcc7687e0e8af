"""Tenancy, roles, ingest keys and throttling: who may do what through the API."""

from __future__ import annotations

import math

from django.conf import settings
from django.test import TestCase, override_settings
from rest_framework.test import APIClient

from campaigns.models import (
    Checkpoint,
    IngestKey,
    MetricPoint,
    PlannedItem,
    Run,
    StopRule,
    Team,
    ThroughputSample,
)
from campaigns.services.keys import revoke_ingest_keys
from campaigns.tests.factories import (
    as_key,
    as_user,
    clear_cache,
    committed_campaign,
    ingest_key,
    make_plannable,
    make_user,
    patch,
    points,
    post,
    rule_ids,
)

RUN_WRITES = {
    "metrics/": points(("loss", 1, math.nan)),
    "throughput/": {"tokens_per_second": 100},
    "checkpoints/": {"step": 1, "components": ["model"]},
    "stop/": {"reason": "someone else's run"},
    "finish/": {"status": "failed", "observed_hours": "1"},
}


class AccessTestCase(TestCase):
    """Team "nlp" owns a committed campaign with a run; team "vision" is another tenant."""

    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.owner = make_user("olga", team=cls.team, role="owner")
        cls.viewer = make_user("vic", team=cls.team, role="viewer")
        cls.campaign = committed_campaign(cls.team, cls.owner, lots=0, automatic_rules=True)
        cls.rules = rule_ids(cls.campaign)
        cls.draft = make_plannable(cls.team, title="a draft")
        cls.nlp_run = Run.objects.create(
            team=cls.team,
            campaign=cls.campaign,
            run_id="nlp-run-1",
            config={},
            config_digest=Run.digest_config({}),
        )
        cls.raw_key = ingest_key(cls.campaign, cls.owner)
        cls.other_team = Team.objects.create(name="vision")
        cls.stranger = make_user("sam", team=cls.other_team, role="owner")
        cls.other_campaign = committed_campaign(
            cls.other_team, cls.stranger, lots=0, automatic_rules=True
        )
        cls.other_key = ingest_key(cls.other_campaign, cls.stranger)

    def assertNothingWrittenToTheRun(self) -> None:
        self.assertFalse(MetricPoint.objects.exists())
        self.assertFalse(ThroughputSample.objects.exists())
        self.assertFalse(Checkpoint.objects.exists())
        self.nlp_run.refresh_from_db()
        self.assertEqual(self.nlp_run.status, "running")


class AnotherTeamsObjectsAre404(AccessTestCase):
    def test_another_teams_run_is_404_for_every_endpoint(self) -> None:
        for client in (as_user(self.stranger), as_key(self.other_key)):
            self.assertEqual(client.get("/api/v1/runs/nlp-run-1/").status_code, 404)
            for action, body in RUN_WRITES.items():
                with self.subTest(action=action):
                    answer = post(client, f"/api/v1/runs/nlp-run-1/{action}", body)
                    self.assertEqual(answer.status_code, 404)
                    self.assertEqual(answer.json(), {"detail": "No such run."})
        self.assertNothingWrittenToTheRun()

    def test_another_teams_campaign_is_404_for_every_endpoint(self) -> None:
        stranger = as_user(self.stranger)
        base = f"/api/v1/campaigns/{self.draft.pk}/"
        self.assertEqual(stranger.get(base).status_code, 404)
        self.assertEqual(patch(stranger, base, {"title": "mine now"}).status_code, 404)
        self.assertEqual(post(stranger, base + "commit/").status_code, 404)
        for child, body in [
            ("variants/", {"name": "x"}),
            ("stop-rules/", {"kind": "input_truncated"}),
            ("decisions/", {"outcome": "continue", "rationale": "r"}),
            ("stages/", {"name": "s", "kind": "setup", "machine": False}),
            ("runs/", {"run_id": "sneaky-1"}),
        ]:
            with self.subTest(child=child):
                self.assertEqual(stranger.get(base + child).status_code, 404)
                self.assertEqual(post(stranger, base + child, body).status_code, 404)
        self.draft.refresh_from_db()
        self.assertEqual((self.draft.title, self.draft.status), ("a draft", "draft"))
        self.assertEqual(PlannedItem.objects.filter(campaign=self.draft).count(), 2)

    def test_the_campaign_list_holds_only_your_teams(self) -> None:
        listed = as_user(self.stranger).get("/api/v1/campaigns/").json()
        self.assertEqual([c["id"] for c in listed["results"]], [self.other_campaign.pk])

    def test_a_run_id_may_be_reused_by_another_team(self) -> None:
        answer = post(
            as_key(self.other_key),
            f"/api/v1/campaigns/{self.other_campaign.pk}/runs/",
            {"run_id": "nlp-run-1"},
        )
        self.assertEqual(answer.status_code, 201)
        self.assertEqual(Run.objects.filter(run_id="nlp-run-1").count(), 2)


class ViewersRead(AccessTestCase):
    def test_a_viewer_reads_campaigns_and_runs(self) -> None:
        viewer = as_user(self.viewer)
        self.assertEqual(viewer.get(f"/api/v1/campaigns/{self.campaign.pk}/").status_code, 200)
        self.assertEqual(viewer.get("/api/v1/runs/nlp-run-1/").status_code, 200)
        runs = viewer.get(f"/api/v1/campaigns/{self.campaign.pk}/runs/").json()["results"]
        self.assertEqual([r["run_id"] for r in runs], ["nlp-run-1"])

    def test_a_viewer_cannot_write_anything(self) -> None:
        viewer = as_user(self.viewer)
        base = f"/api/v1/campaigns/{self.draft.pk}/"
        writes = [
            post(viewer, "/api/v1/campaigns/", {"title": "t"}),
            patch(viewer, base, {"title": "renamed"}),
            post(viewer, base + "commit/"),
            post(viewer, base + "variants/", {"name": "x"}),
            post(viewer, base + "stop-rules/", {"kind": "input_truncated"}),
            post(viewer, base + "decisions/", {"outcome": "continue", "rationale": "r"}),
            post(viewer, base + "stages/", {"name": "s", "kind": "setup", "machine": False}),
            post(viewer, f"/api/v1/campaigns/{self.campaign.pk}/runs/", {"run_id": "v-1"}),
            *(post(viewer, f"/api/v1/runs/nlp-run-1/{a}", b) for a, b in RUN_WRITES.items()),
        ]
        self.assertEqual([w.status_code for w in writes], [403] * len(writes))
        self.assertNothingWrittenToTheRun()
        self.assertEqual(StopRule.objects.filter(campaign=self.draft).count(), 1)
        self.assertEqual(Run.objects.count(), 1)

    def test_a_viewer_writing_to_another_teams_campaign_gets_404_not_403(self) -> None:
        viewer = as_user(self.viewer)
        base = f"/api/v1/campaigns/{self.other_campaign.pk}/"
        writes = [
            patch(viewer, base, {"title": "renamed"}),
            post(viewer, base + "commit/"),
            post(viewer, base + "variants/", {"name": "x"}),
            post(viewer, base + "runs/", {"run_id": "v-2"}),
            post(viewer, base + "ledger/", {"kind": "external", "amount": "1.00"}),
        ]
        self.assertEqual([w.status_code for w in writes], [404] * len(writes))


class IngestKeysAppendRunData(AccessTestCase):
    def test_a_key_creates_runs_and_logs_to_its_campaign(self) -> None:
        loop = as_key(self.raw_key)
        created = post(loop, f"/api/v1/campaigns/{self.campaign.pk}/runs/", {"run_id": "k-1"})
        self.assertEqual(created.status_code, 201)
        logged = post(loop, "/api/v1/runs/k-1/metrics/", points(("loss", 1, 2.0)))
        self.assertEqual(logged.status_code, 201)
        self.assertEqual(loop.get("/api/v1/runs/k-1/").json()["latest"]["points"], 1)

    def test_a_key_cannot_plan_browse_or_reach_another_campaign(self) -> None:
        loop = as_key(self.raw_key)
        base = f"/api/v1/campaigns/{self.campaign.pk}/"
        self.assertEqual(loop.get("/api/v1/campaigns/").status_code, 403)
        self.assertEqual(loop.get(base).status_code, 403)
        self.assertEqual(loop.get(base + "runs/").status_code, 403)
        self.assertEqual(post(loop, base + "commit/").status_code, 403)
        self.assertEqual(post(loop, base + "variants/", {"name": "x"}).status_code, 403)
        self.assertEqual(post(loop, base + "stop-rules/", {"kind": "custom"}).status_code, 403)
        self.assertEqual(post(loop, "/api/v1/campaigns/", {"title": "t"}).status_code, 403)
        # Another campaign of the same team is out of the key's reach.
        other = f"/api/v1/campaigns/{self.draft.pk}/runs/"
        self.assertEqual(post(loop, other, {"run_id": "k-2"}).status_code, 404)
        self.assertEqual(StopRule.objects.filter(campaign=self.campaign).count(), 4)
        self.assertEqual(Run.objects.count(), 1)

    def test_a_revoked_key_gets_401(self) -> None:
        revoke_ingest_keys(campaign=self.campaign)
        answer = post(as_key(self.raw_key), "/api/v1/runs/nlp-run-1/metrics/", points(("l", 1, 1)))
        self.assertEqual(answer.status_code, 401)
        self.assertIn("revoked", answer.json()["detail"])
        self.assertNothingWrittenToTheRun()

    def test_an_owner_revokes_the_keys_in_the_admin_and_they_stop_working(self) -> None:
        admin = APIClient()
        admin.force_login(self.owner)
        answer = admin.post(
            "/admin/campaigns/campaign/",
            {"action": "revoke_ingest_keys", "_selected_action": [self.campaign.pk]},
        )
        self.assertEqual(answer.status_code, 302)
        self.assertIsNotNone(IngestKey.objects.get(campaign=self.campaign).revoked_at)
        self.assertEqual(as_key(self.raw_key).get("/api/v1/runs/nlp-run-1/").status_code, 401)

    def test_a_viewer_cannot_revoke_keys_in_the_admin(self) -> None:
        admin = APIClient()
        admin.force_login(self.viewer)
        admin.post(
            "/admin/campaigns/campaign/",
            {"action": "revoke_ingest_keys", "_selected_action": [self.campaign.pk]},
        )
        self.assertIsNone(IngestKey.objects.get(campaign=self.campaign).revoked_at)

    def test_an_unknown_key_and_no_credentials_get_401(self) -> None:
        self.assertEqual(as_key("cdk_nope").get("/api/v1/runs/nlp-run-1/").status_code, 401)
        anonymous = APIClient()
        self.assertEqual(anonymous.get("/api/v1/campaigns/").status_code, 401)
        self.assertEqual(anonymous.get("/api/v1/schema/").status_code, 401)
        self.assertEqual(anonymous.get("/api/v1/health/").status_code, 200)


class ThrottlingPerKey(AccessTestCase):
    def setUp(self) -> None:
        clear_cache()
        self.addCleanup(clear_cache)

    def test_each_ingest_key_has_its_own_rate(self) -> None:
        rates = {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "ingest_key": "3/min"}
        with override_settings(
            REST_FRAMEWORK={**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": rates}
        ):
            loop = as_key(self.raw_key)
            answers = [loop.get("/api/v1/runs/nlp-run-1/").status_code for _ in range(4)]
            self.assertEqual(answers, [200, 200, 200, 429])
            throttled = loop.get("/api/v1/runs/nlp-run-1/")
            self.assertIn("Retry-After", throttled)
            # Another key (another loop) is not slowed down by the first one.
            other = as_key(self.other_key)
            run = f"/api/v1/campaigns/{self.other_campaign.pk}/runs/"
            self.assertEqual(post(other, run, {"run_id": "v-1"}).status_code, 201)

"""A logging call's ingest key is remembered by the server process for a few seconds (issue 34
item 5), but never past its revocation: the write checks the key again in the statement that
locks the run, so the call after a revocation is refused, with nothing stored."""

from __future__ import annotations

import json
from typing import Any

from django.test import Client, TestCase

from campaigns.models import Campaign, IngestKey, MetricPoint, Team
from campaigns.services import ingest
from campaigns.services.keys import issue_ingest_key, revoke_ingest_keys
from campaigns.tests.factories import clear_cache, committed_campaign, make_user

M = "/mlflow/api/2.0/mlflow/"


class ARememberedKey(TestCase):
    campaign: Campaign
    key: IngestKey
    raw: str

    @classmethod
    def setUpTestData(cls) -> None:
        team = Team.objects.create(name="nlp")
        owner = make_user("olga", team=team, role="owner")
        cls.campaign = committed_campaign(team, owner, lots=0, automatic_rules=True)
        item = cls.campaign.items.get(name="baseline")
        cls.key, cls.raw = issue_ingest_key(campaign=cls.campaign, acting_user=owner, item=item)
        ingest.open_run(cls.campaign, run_id="r-1", variant=item, kind="pilot")

    def setUp(self) -> None:
        clear_cache()
        self.loop = Client(HTTP_AUTHORIZATION=f"Bearer {self.raw}")

    def post(self, route: str, body: dict[str, Any]) -> Any:
        return self.loop.post(M + route, json.dumps(body), content_type="application/json")

    def metric(self, step: int) -> dict[str, Any]:
        return {"run_id": "r-1", "key": "loss", "value": 1.0, "step": step, "timestamp": 1}

    def test_is_refused_on_the_first_call_after_its_revocation(self) -> None:
        self.assertEqual(self.post("runs/log-metric", self.metric(1)).status_code, 200)
        revoke_ingest_keys(campaign=self.campaign, keys=[self.key])
        for route, body in [
            ("runs/log-metric", self.metric(2)),
            ("runs/log-parameter", {"run_id": "r-1", "key": "lr", "value": "0.1"}),
            ("runs/set-tag", {"run_id": "r-1", "key": "epoch", "value": "1"}),
            ("runs/log-batch", {"run_id": "r-1", "metrics": [self.metric(3)]}),
        ]:
            answer = self.post(route, body)
            self.assertEqual(answer.status_code, 401, route)
            self.assertEqual(answer.json()["error_code"], "UNAUTHENTICATED", route)
        self.assertEqual(MetricPoint.objects.filter(run__run_id="r-1").count(), 1)

    def test_still_tells_a_missing_run_from_a_revoked_key(self) -> None:
        self.assertEqual(self.post("runs/log-metric", self.metric(1)).status_code, 200)
        answer = self.post("runs/set-tag", {"run_id": "nope", "key": "epoch", "value": "1"})
        self.assertEqual(answer.status_code, 404)
        self.assertEqual(answer.json()["error_code"], "RESOURCE_DOES_NOT_EXIST")

    def test_reaches_only_its_own_campaigns_runs(self) -> None:
        """Another campaign's run with the same id stays out of reach of a remembered key."""
        other = committed_campaign(self.campaign.team, None, lots=0, automatic_rules=True)
        ingest.open_run(other, run_id="r-2", variant=other.items.get(name="baseline"), kind="pilot")
        self.assertEqual(self.post("runs/log-metric", self.metric(1)).status_code, 200)
        answer = self.post("runs/log-metric", {**self.metric(2), "run_id": "r-2"})
        self.assertEqual(answer.status_code, 404)

"""The MLflow facade under the API's own limits (issue 19, findings 7 and 12, and the oversize
body): throttled by REST_FRAMEWORK's DEFAULT_THROTTLE_RATES in the same buckets as /api/v1/,
answering MLflow's JSON 429; a run id in two of the caller's teams is the REST API's 409; a body
over DATA_UPLOAD_MAX_MEMORY_SIZE is MLflow's JSON 413, not Django's HTML 400."""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.test import Client, TestCase, override_settings

from campaigns.models import MetricPoint, Team
from campaigns.services import ingest
from campaigns.services.keys import issue_ingest_key
from campaigns.tests.factories import (
    as_user,
    clear_cache,
    committed_campaign,
    make_user,
    points,
    token_header,
)

M = "/mlflow/api/2.0/mlflow/"


def _rates(**rates: str) -> Any:
    return override_settings(
        REST_FRAMEWORK={
            **settings.REST_FRAMEWORK,
            "DEFAULT_THROTTLE_RATES": {"ingest_key": "1000/min", "user": "1000/min", **rates},
        }
    )


def _mlflow(client: Client, route: str, body: dict[str, Any]) -> Any:
    return client.post(f"{M}{route}", json.dumps(body), content_type="application/json")


class FacadeTestCase(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.owner = make_user("olga", team=cls.team, role="owner")
        cls.campaign = committed_campaign(cls.team, cls.owner, lots=0, automatic_rules=True)
        item = cls.campaign.items.get(name="baseline")
        _key, cls.raw = issue_ingest_key(campaign=cls.campaign, acting_user=cls.owner, item=item)
        ingest.open_run(cls.campaign, run_id="r-1", variant=item, kind="pilot")

    def setUp(self) -> None:
        clear_cache()
        self.loop = Client(HTTP_AUTHORIZATION=f"Bearer {self.raw}")


class TheFacadeIsThrottledLikeTheApi(FacadeTestCase):
    def test_a_key_over_its_ingest_key_rate_gets_mlflows_json_429_with_retry_after(self) -> None:
        metric = {"run_id": "r-1", "key": "loss", "value": 1.0, "timestamp": 1}
        with _rates(ingest_key="3/min"):
            answers = [
                _mlflow(self.loop, "runs/log-metric", {**metric, "step": s}) for s in range(5)
            ]
        self.assertEqual([a.status_code for a in answers], [200, 200, 200, 429, 429])
        self.assertEqual(answers[3].json()["error_code"], "REQUEST_LIMIT_EXCEEDED")
        self.assertTrue(1 <= int(answers[3]["Retry-After"]) <= 60)
        self.assertEqual(MetricPoint.objects.count(), 3)

    def test_a_key_has_one_budget_across_the_api_and_the_facade(self) -> None:
        with _rates(ingest_key="2/min"):
            api = self.client.post(
                "/api/v1/runs/r-1/metrics/",
                json.dumps(points(("loss", 1, 1.0))),
                content_type="application/json",
                HTTP_AUTHORIZATION=f"Bearer {self.raw}",
            )
            first = self.loop.get(f"{M}runs/get?run_id=r-1")
            second = self.loop.get(f"{M}runs/get?run_id=r-1")
        self.assertEqual((api.status_code, first.status_code, second.status_code), (201, 200, 429))

    def test_a_user_token_is_counted_under_the_user_rate(self) -> None:
        person = Client(**token_header(self.owner))
        with _rates(user="2/min"):
            answers = [person.get(f"{M}runs/get?run_id=r-1").status_code for _ in range(3)]
        self.assertEqual(answers, [200, 200, 429])


class ARunIdInTwoOfTheCallersTeams(FacadeTestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        super().setUpTestData()
        cls.vision = Team.objects.create(name="vision")
        cls.vision.memberships.create(user=cls.owner, role="owner")
        cls.other = committed_campaign(cls.vision, cls.owner, lots=0, automatic_rules=True)
        ingest.open_run(cls.other, run_id="r-1", variant=cls.other.items.get(name="baseline"))

    def setUp(self) -> None:
        super().setUp()
        self.person = Client(**token_header(self.owner))

    def test_the_facade_answers_409_naming_the_ambiguity_as_the_rest_api_does(self) -> None:
        rest = as_user(self.owner).get("/api/v1/runs/r-1/")
        metric = {"run_id": "r-1", "key": "loss", "value": 1.0, "step": 1, "timestamp": 1}
        for answer in (
            _mlflow(self.person, "runs/log-metric", metric),
            self.person.get(f"{M}runs/get?run_id=r-1"),
            _mlflow(self.person, "runs/update", {"run_id": "r-1", "status": "FINISHED"}),
        ):
            self.assertEqual((answer.status_code, rest.status_code), (409, 409))
            self.assertIn("several of your teams", answer.json()["message"])
            self.assertEqual(answer.json()["error_code"], "RESOURCE_CONFLICT")
        self.assertFalse(MetricPoint.objects.exists())

    def test_an_ingest_key_names_its_one_campaigns_run(self) -> None:
        metric = {"run_id": "r-1", "key": "loss", "value": 1.0, "step": 1, "timestamp": 1}
        self.assertEqual(_mlflow(self.loop, "runs/log-metric", metric).status_code, 200)
        self.assertEqual(MetricPoint.objects.get().run.campaign_id, self.campaign.pk)


class AnOversizeBody(FacadeTestCase):
    def test_is_mlflows_json_413_naming_the_limit(self) -> None:
        body = {"run_id": "r-1", "key": "t", "value": "v" * 5000}
        with override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=1000):
            answer = _mlflow(self.loop, "runs/set-tag", body)
        self.assertEqual(answer.status_code, 413)
        self.assertEqual(answer.json()["error_code"], "RESOURCE_EXHAUSTED")
        self.assertIn("DATA_UPLOAD_MAX_MEMORY_SIZE", answer.json()["message"])

"""Errors are JSON everywhere under /api/, and bad input is a 4xx naming the field, never a 500."""

from __future__ import annotations

from django.test import TestCase, override_settings
from rest_framework.test import APIClient

from campaigns.models import MetricPoint, Run, Team
from campaigns.tests.factories import (
    as_key,
    as_user,
    committed_campaign,
    ingest_key,
    make_user,
    post,
)


class JsonErrors(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.owner = make_user("olga", team=cls.team, role="owner")
        cls.campaign = committed_campaign(cls.team, cls.owner, lots=0, automatic_rules=True)
        cls.raw_key = ingest_key(cls.campaign, cls.owner)

    def setUp(self) -> None:
        self.desk = as_user(self.owner)
        self.runs = f"/api/v1/campaigns/{self.campaign.pk}/runs/"

    def send(self, url: str, raw: bytes, content_type: str = "application/json") -> object:
        return self.desk.post(url, data=raw, content_type=content_type)

    def assertJsonError(self, answer: object, status: int) -> dict:  # type: ignore[type-arg]
        self.assertEqual(answer.status_code, status, answer.content)  # type: ignore[attr-defined]
        self.assertEqual(answer["Content-Type"], "application/json")  # type: ignore[index]
        return answer.json()  # type: ignore[attr-defined,no-any-return]

    def test_an_unknown_api_path_is_a_json_404_with_or_without_debug(self) -> None:
        for debug in (False, True):
            with self.subTest(debug=debug), override_settings(DEBUG=debug):
                self.assertJsonError(self.desk.get("/api/v1/nowhere/"), 404)
                # A POST missing its slash must not crash on APPEND_SLASH either.
                self.assertJsonError(post(self.desk, "/api/v1/campaigns"), 404)

    def test_an_unknown_run_and_a_run_id_that_cannot_exist_are_json_404s(self) -> None:
        self.assertJsonError(self.desk.get("/api/v1/runs/nope/"), 404)
        self.assertJsonError(self.desk.get("/api/v1/runs/%00/"), 404)
        self.assertJsonError(post(self.desk, "/api/v1/runs/%00/metrics/", {}, key="k-nul"), 404)

    def test_a_refused_method_is_a_json_405(self) -> None:
        body = self.assertJsonError(self.desk.delete(f"/api/v1/campaigns/{self.campaign.pk}/"), 405)
        self.assertIn("DELETE", body["detail"])
        self.assertJsonError(self.desk.get("/api/v1/runs/x-1/throughput/"), 405)

    def test_malformed_json_is_a_json_400(self) -> None:
        body = self.assertJsonError(self.send(self.runs, b'{"run_id": '), 400)
        self.assertIn("JSON parse error", body["detail"])

    def test_a_form_body_is_a_json_415(self) -> None:
        self.assertJsonError(
            self.send(self.runs, b"run_id=x", "application/x-www-form-urlencoded"), 415
        )
        self.assertJsonError(self.send("/api/v1/runs/x/metrics/", b"a=1", "text/plain"), 404)

    def test_text_postgresql_cannot_store_is_refused_not_crashed_on(self) -> None:
        # A lone surrogate is valid JSON but not storable text; a NUL inside a config too.
        self.assertJsonError(
            self.send(self.runs, b'{"run_id": "r-1", "config": {"a": "\\ud800"}}'), 400
        )
        body = self.assertJsonError(
            self.send(self.runs, b'{"run_id": "r-1", "config": {"a\\u0000": 1}}'), 400
        )
        self.assertIn("config", body)
        self.assertFalse(Run.objects.exists())

    def test_absurd_numbers_and_nesting_are_400s(self) -> None:
        post(self.desk, self.runs, {"run_id": "r-1"})
        metrics = "/api/v1/runs/r-1/metrics/"
        huge_step = b'{"points": [{"name": "loss", "step": 99999999999999999999, "value": 1}]}'
        self.assertIn("points", self.assertJsonError(self.send(metrics, huge_step), 400))
        overflow = b'{"points": [{"name": "loss", "step": 1, "value": 1e999}]}'
        self.assertJsonError(self.send(metrics, overflow), 400)
        with_nan = b'{"points": [{"name": "loss", "step": 1, "value": NaN}, {"v": 1e999}]}'
        self.assertJsonError(self.send(metrics, with_nan), 400)
        deep = b'{"run_id": "r-2", "config": ' + b'{"a": ' * 40 + b"1" + b"}" * 41
        self.assertIn("config", self.assertJsonError(self.send(self.runs, deep), 400))
        checkpoint = b'{"step": 1e400, "components": []}'
        self.assertJsonError(self.send("/api/v1/runs/r-1/checkpoints/", checkpoint), 400)
        self.assertFalse(MetricPoint.objects.exists())

    def test_a_body_over_the_upload_limit_is_413(self) -> None:
        post(self.desk, self.runs, {"run_id": "r-1"})
        big = (
            b'{"points": ['
            + b",".join([b'{"name": "loss", "step": 1, "value": 1.0}'] * 400)
            + b"]}"
        )
        with override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=1000):
            self.assertJsonError(self.send("/api/v1/runs/r-1/metrics/", big), 413)
            keyed = self.desk.post(
                "/api/v1/runs/r-1/metrics/",
                data=big,
                content_type="application/json",
                headers={"Idempotency-Key": "big-1"},
            )
            self.assertJsonError(keyed, 413)
        self.assertFalse(MetricPoint.objects.exists())

    def test_no_credentials_is_a_json_401(self) -> None:
        body = self.assertJsonError(APIClient().get("/api/v1/runs/r-1/"), 401)
        self.assertIn("detail", body)

    def test_an_ingest_key_refused_a_planning_endpoint_is_told_why(self) -> None:
        body = self.assertJsonError(as_key(self.raw_key).get("/api/v1/campaigns/"), 403)
        self.assertIn("ingest key", body["detail"])


class ListParameters(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.owner = make_user("olga", team=cls.team, role="owner")
        committed_campaign(cls.team, cls.owner, lots=0, automatic_rules=True)

    def test_absurd_limits_and_offsets_are_400s_naming_the_parameter_not_crashes(self) -> None:
        desk = as_user(self.owner)
        huge = "46717912942383467314155741046112256"
        for query, name in (
            (f"limit={huge}", "limit"),
            (f"offset={huge}", "offset"),
            ("limit=-3", "limit"),
            ("offset=-1", "offset"),
            ("limit=x", "limit"),
            ("offset=1.5", "offset"),
            ("limit=1001", "limit"),
            ("limit=0", "limit"),
        ):
            with self.subTest(query=query):
                answer = desk.get(f"/api/v1/campaigns/?{query}")
                self.assertEqual(answer.status_code, 400, answer.content)
                self.assertIn(name, answer.json())
        answer = desk.get("/api/v1/campaigns/?limit=1000&offset=0")
        self.assertEqual(answer.json()["count"], 1)

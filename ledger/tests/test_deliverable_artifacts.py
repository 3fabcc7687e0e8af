"""A deliverable can name a file the run logged as an artifact (MLflow's log_artifact, docs/
mlflow.md): by its path alone, the server taking the size and sha256 it computed when the file
was stored; a size or digest sent for it must agree with them."""

from __future__ import annotations

from django.test import TestCase

from campaigns.models import PlannedItem, Team
from campaigns.services import ingest
from campaigns.tests.factories import (
    GOOD_SHA,
    as_user,
    committed_campaign,
    deliverable_body,
    make_run,
    make_user,
)

STORED_SHA = "b" * 64


class DeliverableNamingAnArtifact(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.planner = make_user("pia", team=cls.team)
        cls.campaign = committed_campaign(cls.team)
        baseline = PlannedItem.objects.get(campaign=cls.campaign, name="baseline")
        cls.logged = make_run(cls.campaign, "base-1", variant=baseline, observed_hours="9.5")
        ingest.record_artifact(
            cls.logged,
            path="predictions/test.jsonl",
            size_bytes=4096,
            sha256=STORED_SHA,
            storage_name="artifacts/x/test.jsonl",
        )

    def setUp(self) -> None:
        self.api = as_user(self.planner)
        self.url = f"/api/v1/campaigns/{self.campaign.pk}/deliverables/"

    def submit(self, files: list[dict[str, object]]) -> object:
        body = {**deliverable_body(run="base-1"), "files": files}
        return self.api.post(self.url, body, format="json")

    def test_an_artifact_named_by_its_path_takes_the_stored_size_and_digest(self) -> None:
        answer = self.submit([{"path": "predictions/test.jsonl"}])
        self.assertEqual(answer.status_code, 201, answer.content)
        body = answer.json()
        self.assertTrue(body["accepted"], body["rejection_reasons"])
        self.assertEqual(
            body["files"],
            [{"path": "predictions/test.jsonl", "size_bytes": 4096, "sha256": STORED_SHA}],
        )

    def test_a_digest_other_than_the_stored_one_is_a_rejection_reason(self) -> None:
        answer = self.submit(
            [{"path": "predictions/test.jsonl", "size_bytes": 4096, "sha256": GOOD_SHA}]
        )
        self.assertEqual(answer.status_code, 201)
        self.assertFalse(answer.json()["accepted"])
        self.assertIn(
            "predictions/test.jsonl differs from the artifact the run logged",
            " ".join(answer.json()["rejection_reasons"]),
        )

    def test_a_file_that_is_no_artifact_still_needs_its_size_and_digest(self) -> None:
        answer = self.submit([{"path": "elsewhere/preds.jsonl"}])
        self.assertEqual(answer.status_code, 400)
        self.assertIn("files", answer.json())

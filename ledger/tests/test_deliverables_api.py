"""POST /campaigns/{id}/deliverables/: the server's checks and its verdict."""

from __future__ import annotations

from django.test import TestCase

from campaigns.models import PlannedItem, Team
from campaigns.tests.factories import (
    GOOD_SHA,
    as_user,
    committed_campaign,
    deliverable_body,
    ingest_client,
    make_run,
    make_user,
)
from ledger.domain.deliverable_checks import REASON_ADAPTER_BASE
from ledger.models import Deliverable


class DeliverableApiTests(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.other = Team.objects.create(name="vision")
        cls.planner = make_user("pia", team=cls.team)
        cls.viewer = make_user("vic", team=cls.team, role="viewer")
        cls.outsider = make_user("otto", team=cls.other)
        cls.campaign = committed_campaign(cls.team)
        cls.sibling = committed_campaign(cls.team, title="Sibling")
        cls.theirs = committed_campaign(cls.other, title="Theirs")
        baseline = PlannedItem.objects.get(campaign=cls.campaign, name="baseline")
        cls.done = make_run(cls.campaign, "base-1", variant=baseline, observed_hours="9.5")
        cls.stopped = make_run(
            cls.campaign, "base-nan", variant=baseline, status="stopped", stop_reason="loss is NaN"
        )
        make_run(cls.sibling, "sibling-1")
        make_run(cls.theirs, "their-1")

    def setUp(self) -> None:
        self.api = as_user(self.planner)
        self.url = f"/api/v1/campaigns/{self.campaign.pk}/deliverables/"

    def test_a_complete_deliverable_from_a_finished_run_is_accepted(self) -> None:
        answer = self.api.post(self.url, deliverable_body(run="base-1"), format="json")
        self.assertEqual(answer.status_code, 201, answer.json())
        body = answer.json()
        self.assertTrue(body["accepted"])
        self.assertEqual(body["rejection_reasons"], [])
        self.assertEqual(body["run"], "base-1")
        self.assertEqual(body["corpus"], {"name": "tickets", "revision": "abc123"})
        self.assertEqual(body["files"][0]["sha256"], GOOD_SHA)
        self.assertTrue(Deliverable.objects.get(pk=body["id"]).accepted)

    def test_it_refuses_1_for_a_boolean_and_a_number_for_a_path_storing_nothing(self) -> None:
        files = [{"path": 7, "size_bytes": 1024, "sha256": GOOD_SHA}]
        for body, field in [
            (deliverable_body(run="base-1", expected_ids_ok=1), "expected_ids_ok"),
            (deliverable_body(run="base-1", reload_verified="true"), "reload_verified"),
            (deliverable_body(run="base-1", files=files), "files"),
            (
                deliverable_body(
                    run="base-1", files=[{**files[0], "path": "a", "size_bytes": "9"}]
                ),
                "files",
            ),
        ]:
            with self.subTest(field=field, body=body):
                answer = self.api.post(self.url, body, format="json")
                self.assertEqual(answer.status_code, 400, answer.content)
                self.assertIn(field, answer.json())
        self.assertFalse(Deliverable.objects.exists())

    def test_a_deliverable_of_a_stopped_run_is_kept_but_rejected_with_the_run_id(self) -> None:
        answer = self.api.post(self.url, deliverable_body(run="base-nan"), format="json")
        self.assertEqual(answer.status_code, 201)
        self.assertFalse(answer.json()["accepted"])
        self.assertIn("run base-nan was stopped", answer.json()["rejection_reasons"][0])

    def test_the_server_finds_empty_files_and_temporary_paths_itself(self) -> None:
        body = deliverable_body(
            files=[
                {"path": "/tmp/tmpab12/preds.jsonl", "size_bytes": 10, "sha256": GOOD_SHA},
                {"path": "outputs/empty.jsonl", "size_bytes": 0, "sha256": GOOD_SHA},
                {"path": "outputs/short.jsonl", "size_bytes": 5, "sha256": "xyz"},
            ]
        )
        reasons = self.api.post(self.url, body, format="json").json()["rejection_reasons"]
        joined = "\n".join(reasons)
        self.assertIn("temporary directory (/tmp): /tmp/tmpab12/preds.jsonl", joined)
        self.assertIn("empty file: outputs/empty.jsonl", joined)
        self.assertIn("malformed sha256 for outputs/short.jsonl", joined)

    def test_an_adapter_without_its_base_revision_is_rejected_with_the_reason(self) -> None:
        answer = self.api.post(self.url, deliverable_body(kind="adapter"), format="json")
        self.assertEqual(answer.status_code, 201)
        self.assertEqual(answer.json()["rejection_reasons"], [REASON_ADAPTER_BASE])
        with_base = deliverable_body(kind="adapter", base_revision="meta-llama/Llama-3-8B@5f0b02c")
        self.assertTrue(self.api.post(self.url, with_base, format="json").json()["accepted"])

    def test_unchecked_ids_and_reload_are_reasons_not_silence(self) -> None:
        body = deliverable_body()
        del body["expected_ids_ok"], body["reload_verified"]
        reasons = self.api.post(self.url, body, format="json").json()["rejection_reasons"]
        self.assertEqual(len(reasons), 2)
        self.assertIn("expected identifiers not checked", reasons)

    def test_a_run_of_another_campaign_or_team_is_a_400_naming_run(self) -> None:
        for run_id in ("sibling-1", "their-1", "nobody"):
            with self.subTest(run=run_id):
                answer = self.api.post(self.url, deliverable_body(run=run_id), format="json")
                self.assertEqual(answer.status_code, 400)
                self.assertIn("run", answer.json())
        self.assertFalse(Deliverable.objects.exists())

    def test_malformed_bodies_are_400_with_field_errors(self) -> None:
        cases = {
            "kind": deliverable_body(kind="poem"),
            "corpus": deliverable_body(corpus=""),
            "files": {**deliverable_body(), "files": "preds.jsonl"},
        }
        for field, body in cases.items():
            with self.subTest(field=field):
                answer = self.api.post(self.url, body, format="json")
                self.assertEqual(answer.status_code, 400)
                self.assertIn(field, answer.json())

    def test_a_file_size_beyond_a_bigint_or_below_zero_is_a_400_naming_it(self) -> None:
        for size in (2**63, -1):
            body = deliverable_body()
            body["files"][0]["size_bytes"] = size
            with self.subTest(size=size):
                answer = self.api.post(self.url, body, format="json")
                self.assertEqual(answer.status_code, 400)
                self.assertIn("size_bytes", str(answer.json()["files"]), answer.json())
        self.assertFalse(Deliverable.objects.exists())

    def test_the_list_shows_each_verdict(self) -> None:
        self.api.post(self.url, deliverable_body(run="base-1"), format="json")
        self.api.post(self.url, deliverable_body(run="base-nan"), format="json")
        rows = self.api.get(self.url).json()["results"]
        self.assertEqual([r["accepted"] for r in rows], [True, False])

    def test_tenancy_roles_and_ingest_keys(self) -> None:
        self.assertEqual(as_user(self.outsider).get(self.url).status_code, 404)
        outsider = as_user(self.outsider).post(self.url, deliverable_body(), format="json")
        self.assertEqual(outsider.status_code, 404)
        viewer = as_user(self.viewer)
        self.assertEqual(viewer.get(self.url).status_code, 200)
        self.assertEqual(viewer.post(self.url, deliverable_body(), format="json").status_code, 403)
        key = ingest_client(self.campaign)
        self.assertEqual(key.post(self.url, deliverable_body(), format="json").status_code, 403)
        self.assertFalse(Deliverable.objects.exists())

    def test_put_and_delete_answer_405(self) -> None:
        created = self.api.post(self.url, deliverable_body(), format="json").json()
        for target in (self.url, f"{self.url}{created['id']}/"):
            self.assertEqual(self.api.delete(target).status_code, 405)
            self.assertEqual(self.api.put(target, {}, format="json").status_code, 405)
        self.assertTrue(Deliverable.objects.filter(pk=created["id"]).exists())

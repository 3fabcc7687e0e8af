"""The run writes the MLflow facade adds to campaigns/services/ingest.py: params into the config,
tags,
artifacts (docs/mlflow.md). Through the functions themselves; the facade's own tests drive
them with the real MLflow client."""

from __future__ import annotations

from django.test import TestCase

from campaigns.models import Run, RunArtifact, Team
from campaigns.services import ingest, run_lifecycle
from campaigns.tests.factories import as_user, committed_campaign, make_user, post, rule_ids


class IngestMlflowWritesTestCase(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.owner = make_user("olga", team=cls.team, role="owner")
        cls.campaign = committed_campaign(cls.team, cls.owner, lots=0, automatic_rules=True)
        cls.rules = rule_ids(cls.campaign)
        cls.baseline = cls.campaign.items.get(name="baseline")

    def open(self, run_id: str = "r1") -> Run:
        run, _ = ingest.open_run(
            self.campaign, run_id=run_id, variant=self.baseline, kind="pilot", config={}
        )
        return run

    def test_params_grow_the_config_and_api_v1_recognises_the_same_run(self) -> None:
        run = ingest.add_params(self.open(), {"lr": "2e-4", "rank": "16"})
        self.assertEqual(run.config, {"lr": "2e-4", "rank": "16"})
        body = {
            "run_id": "r1",
            "variant": self.baseline.pk,
            "kind": "pilot",
            "config": {"rank": "16", "lr": "2e-4"},
        }
        response = post(as_user(self.owner), f"/api/v1/campaigns/{self.campaign.pk}/runs/", body)
        self.assertEqual(response.status_code, 200, response.content)

    def test_a_param_with_another_value_is_refused_and_nothing_changes(self) -> None:
        run = ingest.add_params(self.open(), {"lr": "2e-4"})
        with self.assertRaisesMessage(ingest.RunRefused, "a new configuration needs a new run"):
            ingest.add_params(run, {"lr": "1e-4", "seed": "1"})
        run.refresh_from_db()
        self.assertEqual(run.config, {"lr": "2e-4"})

    def test_tags_are_merged_and_deleted_but_not_after_a_stop(self) -> None:
        run = ingest.set_tags(self.open(), {"a": "1", "b": "2"})
        run = ingest.set_tags(run, {"b": "3"}, delete=["a"])
        self.assertEqual(run.tags, {"b": "3"})
        run_lifecycle.stop_run(run=run, reason="by hand")
        with self.assertRaises(ingest.RunRefused):
            ingest.set_tags(run, {"c": "4"})

    def test_an_artifact_logged_again_replaces_the_record_and_names_the_old_file(self) -> None:
        run = self.open()
        first, replaced = ingest.record_artifact(
            run, path="notes.txt", size_bytes=3, sha256="a" * 64, storage_name="x/1/notes.txt"
        )
        self.assertIsNone(replaced)
        run_lifecycle.stop_run(run=run, reason="by hand")  # a stopped run's files are still taken
        second, replaced = ingest.record_artifact(
            run, path="notes.txt", size_bytes=5, sha256="b" * 64, storage_name="x/2/notes.txt"
        )
        self.assertEqual(replaced, "x/1/notes.txt")
        self.assertEqual(first.pk, second.pk)
        stored = RunArtifact.objects.get(run=run)
        self.assertEqual((stored.size_bytes, stored.sha256), (5, "b" * 64))

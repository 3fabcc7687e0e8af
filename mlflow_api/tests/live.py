"""A live server with a committed campaign, an ingest key bound to its baseline, and the
real MLflow client pointed at it by the two environment variables of docs/mlflow.md."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from unittest import mock

import mlflow
from django.test import LiveServerTestCase, override_settings

from campaigns.models import PlannedItem, Run, StopRule, Team
from campaigns.services.keys import issue_ingest_key
from campaigns.services.plans import commit_plan
from campaigns.tests.factories import make_plannable, make_user


class MlflowLiveCase(LiveServerTestCase):
    def setUp(self) -> None:
        media = tempfile.mkdtemp(prefix="cd-mlflow-media-")
        self.addCleanup(shutil.rmtree, media, ignore_errors=True)
        self.enterContext(override_settings(MEDIA_ROOT=media))
        self.team = Team.objects.create(name="nlp")
        self.owner = make_user("olga", team=self.team, role="owner")
        self.campaign = make_plannable(self.team, title="LoRA vs full")
        commit_plan(campaign=self.campaign, acting_user=self.owner)
        self.baseline = PlannedItem.objects.get(campaign=self.campaign, name="baseline")
        self.nan_rule = StopRule.objects.get(campaign=self.campaign, kind="non_finite_loss")
        _key, self.key = issue_ingest_key(
            campaign=self.campaign, acting_user=self.owner, item=self.baseline
        )

    def tearDown(self) -> None:
        with self.tracking(self.key):
            while mlflow.active_run() is not None:
                mlflow.end_run()

    @contextmanager
    def tracking(self, token: str, uri: str | None = None) -> Iterator[None]:
        env = {
            "MLFLOW_TRACKING_URI": uri or f"{self.live_server_url}/mlflow",
            "MLFLOW_TRACKING_TOKEN": token,
            "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "0",
            "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "2",
        }
        # MLflow's fluent API keeps the active experiment in a module global and in
        # MLFLOW_EXPERIMENT_ID: an earlier test's campaign id must not leak into this one.
        # Likewise the tracking URI: Lightning's MLFlowLogger calls mlflow.set_tracking_uri(),
        # a module global that outranks MLFLOW_TRACKING_URI. Left set, the next test class
        # talks to the previous class's stopped live server: one kept-alive connection is
        # still answered by its lingering handler thread, every new one is refused.
        import mlflow.tracking._tracking_service.utils as tracking_uri
        import mlflow.tracking.fluent as fluent

        fluent._active_experiment_id = None
        tracking_uri._tracking_uri = None
        with mock.patch.dict(os.environ, env):
            os.environ.pop("MLFLOW_EXPERIMENT_ID", None)
            os.environ.pop("MLFLOW_EXPERIMENT_NAME", None)
            try:
                yield
            finally:
                fluent._active_experiment_id = None
                tracking_uri._tracking_uri = None

    def run_row(self, name: str) -> Run:
        """The run the script named `name` (MLflow's run_name; the run id is generated)."""
        return Run.objects.get(team=self.team, run_name=name)

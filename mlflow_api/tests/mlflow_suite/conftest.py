"""The harness the ported MLflow tracking tests run in (README.md beside this file).

Against Campaign Desk (the default, in `make test`): one live server for the session, and per
test a fresh committed campaign titled "Default" (a campaign is its default experiment, so MLflow
tests that look for "Default" find it) with an ingest key bound to its baseline; the client
gets the key as MLFLOW_TRACKING_TOKEN. Against MLflow's own server (MLFLOW_SUITE_SERVER=<the
`mlflow` executable of another virtualenv>): per test a fresh `mlflow server` on its own SQLite
store, as MLflow's own fixture starts one, so both servers are measured by the same tests.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from typing import Any

import mlflow
import pytest
import requests
from django.test import override_settings
from mlflow import MlflowClient

from campaigns.services.keys import issue_ingest_key

THEIRS = os.environ.get("MLFLOW_SUITE_SERVER", "")

# Ported tests that fail on MLflow 3.18's own server too: the copies predate its client
# (README.md). Expected to fail, strictly: the day one passes, the mark must go.
_CLIENT_RAISES_TYPEERROR = "MLflow 3.18's client raises TypeError before sending"
STALE = {
    "test_create_experiments_with_bad_name_types": _CLIENT_RAISES_TYPEERROR,
    "test_log_metric_validation": _CLIENT_RAISES_TYPEERROR,
    "test_log_batch_validates_entity_names_and_values": _CLIENT_RAISES_TYPEERROR,
    "test_create_experiment": "MLflow 3.18 sends create_experiment(None); its server names 'name'",
    "test_create_experiments_with_bad_names": "as test_create_experiment",
    "test_set_experiment_with_zero_id": "MLflow 3.18's set_experiment no longer asks by name",
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        name = getattr(item, "originalname", item.name)
        if "mlflow_suite/test_port_tracking" in item.nodeid and name in STALE:
            item.add_marker(pytest.mark.xfail(strict=True, reason=STALE[name]))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _reset_fluent_state() -> None:
    """MLflow's fluent API keeps the active experiment, run and tracking URI in module
    globals; a test's must not leak into the next."""
    import mlflow.tracking._tracking_service.utils as tracking_uri
    import mlflow.tracking.fluent as fluent

    while mlflow.active_run() is not None:
        mlflow.end_run()
    fluent._active_experiment_id = None
    tracking_uri._tracking_uri = None


@pytest.fixture(scope="session")
def _their_store(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A migrated, empty SQLite store, copied for each test (migrating one takes longer than
    the test)."""
    path = tmp_path_factory.mktemp("mlflow-store") / "template.db"
    subprocess.run([THEIRS, "db", "upgrade", f"sqlite:///{path}"], check=True, capture_output=True)
    return str(path)


@pytest.fixture
def _their_server(tmp_path: Any, _their_store: str) -> Iterator[str]:
    port = _free_port()
    shutil.copy(_their_store, tmp_path / "mlflow.db")
    store = f"sqlite:///{tmp_path}/mlflow.db"
    log = (tmp_path / "server.log").open("wb")
    proc = subprocess.Popen(
        [
            THEIRS,
            "server",
            "--backend-store-uri",
            store,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            "1",
            "--artifacts-destination",
            str(tmp_path / "artifacts"),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        # No job runner (its huey consumers take half a minute to start, per test).
        env={**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"},
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(url)
        yield url
    finally:
        os.killpg(proc.pid, 15)
        proc.wait(timeout=30)


def _wait_until_up(url: str) -> None:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            if requests.get(f"{url}/health", timeout=2).status_code == 200:
                return
        except requests.RequestException:
            pass
        time.sleep(0.3)
    raise RuntimeError(f"MLflow's server at {url} did not come up in 300 s")


@pytest.fixture
def _desk_server(request: pytest.FixtureRequest) -> Iterator[str]:
    live = request.getfixturevalue("live_server")
    from campaigns.models import PlannedItem, Team
    from campaigns.services.plans import commit_plan
    from campaigns.tests.factories import make_plannable, make_user

    media = tempfile.mkdtemp(prefix="cd-mlflow-suite-")
    team = Team.objects.create(name="suite")
    owner = make_user("suite-owner", team=team, role="owner")
    campaign = make_plannable(team, title="Default")
    commit_plan(campaign=campaign, acting_user=owner)
    item = PlannedItem.objects.get(campaign=campaign, name="baseline")
    _key, raw = issue_ingest_key(campaign=campaign, acting_user=owner, item=item)
    os.environ["MLFLOW_TRACKING_TOKEN"] = raw
    try:
        with override_settings(MEDIA_ROOT=media):
            yield f"{live.url}/mlflow"
    finally:
        os.environ.pop("MLFLOW_TRACKING_TOKEN", None)
        shutil.rmtree(media, ignore_errors=True)


@pytest.fixture
def tracking_uri(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    for name in ("MLFLOW_EXPERIMENT_ID", "MLFLOW_EXPERIMENT_NAME", "MLFLOW_RUN_ID"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    _reset_fluent_state()
    uri = request.getfixturevalue("_their_server" if THEIRS else "_desk_server")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    try:
        yield uri
    finally:
        _reset_fluent_state()


@pytest.fixture
def mlflow_client(tracking_uri: str) -> MlflowClient:
    return MlflowClient(tracking_uri)


def auth_headers() -> dict[str, str]:
    token = os.environ.get("MLFLOW_TRACKING_TOKEN")
    return {"Authorization": f"Bearer {token}"} if token else {}


def send_post(tracking_uri: str, path: str, payload: dict[str, Any]) -> requests.Response:
    """A raw POST of `payload` as MLflow's tests send one (with the key, here)."""
    return requests.post(f"{tracking_uri}{path}", json=payload, headers=auth_headers(), timeout=30)


def bad_request(uri: str, path: str) -> Any:
    """A checker: POSTing `payload` to `path` answers 400 with `expected` in its text."""

    def check(payload: dict[str, Any], expected: str) -> None:
        response = send_post(uri, path, payload)
        assert response.status_code == 400
        assert expected in response.text

    return check

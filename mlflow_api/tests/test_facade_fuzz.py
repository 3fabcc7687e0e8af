"""Every route of the MLflow facade, fed the bad input of issue 19 (finding 11): no answer is a
5xx, and every refusal is MLflow's JSON error (`error_code`, `message`), so MLflow's client,
which retries 5xx, never re-sends a request that can only fail again.

A table, not hypothesis: each route's valid body, with each field in turn replaced by each bad
value (`²` as an id, NUL bytes, lone surrogates, huge numbers, wrong JSON types...), sent by an
ingest key and by a user token. Each request runs in a savepoint rolled back after it, so one
case never changes what the next one meets.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from typing import Any
from urllib.parse import quote

from django.db import transaction
from django.test import Client, TestCase, override_settings

from campaigns.models import Run, Team
from campaigns.services import ingest
from campaigns.services.campaigns import close_campaign
from campaigns.services.keys import issue_ingest_key
from campaigns.tests.factories import clear_cache, committed_campaign, make_user, token_header

M = "/mlflow/api/2.0/mlflow/"
A = "/mlflow/api/2.0/mlflow-artifacts/artifacts"

# The kinds of bad input of finding 11, and wrong JSON types for every field.
BAD: list[Any] = [
    "²",
    "١٢",
    "\x00",
    "r-1\x00",
    "\ud800",
    "x" * 300,
    "",
    10**30,
    -(10**30),
    2**63,
    1.5,
    float("inf"),
    True,
    None,
    [],
    ["x"],
    {},
    {"a": 1},
]

# route → (method, valid body). "{run}" is the running run's id, "{exp}" its campaign's id.
ROUTES: dict[str, tuple[str, dict[str, Any]]] = {
    "experiments/get-by-name": ("GET", {"experiment_name": "{exp}"}),
    "experiments/get": ("GET", {"experiment_id": "{exp}"}),
    "experiments/create": ("POST", {"name": "{exp}"}),
    "experiments/search": ("POST", {"max_results": 10}),
    "runs/create": (
        "POST",
        {
            "experiment_id": "{exp}",
            "run_name": "n",
            "start_time": 1,
            "tags": [{"key": "desk.kind", "value": "pilot"}],
        },
    ),
    "runs/get": ("GET", {"run_id": "{run}"}),
    "runs/update": (
        "POST",
        {"run_id": "{run}", "status": "FINISHED", "end_time": 1_700_000_000_000},
    ),
    "runs/delete": ("POST", {"run_id": "{run}"}),
    "runs/restore": ("POST", {"run_id": "{run}"}),
    "runs/search": (
        "POST",
        {"experiment_ids": ["{exp}"], "filter": "metrics.loss < 1", "max_results": 5},
    ),
    "runs/log-metric": (
        "POST",
        {"run_id": "{run}", "key": "loss", "value": 1.0, "step": 1, "timestamp": 1},
    ),
    "runs/log-batch": (
        "POST",
        {
            "run_id": "{run}",
            "metrics": [{"key": "loss", "value": 1.0, "step": 2, "timestamp": 1}],
            "params": [{"key": "lr", "value": "0.1"}],
            "tags": [{"key": "t", "value": "v"}],
        },
    ),
    "runs/log-parameter": ("POST", {"run_id": "{run}", "key": "lr", "value": "0.1"}),
    "runs/set-tag": ("POST", {"run_id": "{run}", "key": "t", "value": "v"}),
    "runs/delete-tag": ("POST", {"run_id": "{run}", "key": "t"}),
    "runs/log-inputs": (
        "POST",
        {"run_id": "{run}", "datasets": [{"dataset": {"name": "d", "digest": "x"}}]},
    ),
    "runs/outputs": ("POST", {"run_id": "{run}", "models": [{"model_id": "m-1", "step": 1}]}),
    "runs/log-model": ("POST", {"run_id": "{run}", "model_json": "{}"}),
    "metrics/get-history": ("GET", {"run_id": "{run}", "metric_key": "loss", "max_results": 5}),
    "logged-models": (
        "POST",
        {"experiment_id": "{exp}", "name": "m", "source_run_id": "{run}", "model_type": "t"},
    ),
    "logged-models/search": ("POST", {"experiment_ids": ["{exp}"]}),
    "registered-models/create": ("POST", {"name": "m", "source": "models:/m-1"}),
}


def _fill(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, str):
        return names[value[1:-1]] if value in ("{run}", "{exp}") else value
    if isinstance(value, list):
        return [_fill(v, names) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, names) for k, v in value.items()}
    return value


def _variants(body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The valid body, then each field replaced by each bad value (inside a list's first
    element too: a metric's step, a tag's key)."""
    out: list[tuple[str, dict[str, Any]]] = [("valid", body)]
    for field, value in body.items():
        for bad in BAD:
            out.append((f"{field}={bad!r}"[:60], {**body, field: bad}))
        if isinstance(value, list) and value and isinstance(value[0], dict):
            for inner in value[0]:
                for bad in BAD:
                    element = {**value[0], inner: bad}
                    out.append((f"{field}[0].{inner}={bad!r}"[:60], {**body, field: [element]}))
    return out


def _query(body: dict[str, Any]) -> str:
    """A GET's query string; a lone surrogate goes as the bytes it would be (invalid UTF-8)."""
    parts = []
    for key, value in body.items():
        text = value if isinstance(value, str) else json.dumps(value)
        raw = text.encode("utf-8", "surrogatepass")
        parts.append(f"{key}={quote(raw)}")
    return "&".join(parts)


class EveryRouteRefusesBadInputWithMlflowsJsonError(TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        # The class's own media directory, made when the class runs and removed after it (made
        # at import, every xdist worker that collected the module left an empty one in /tmp).
        media = tempfile.mkdtemp(prefix="cd-fuzz-")
        cls.addClassCleanup(shutil.rmtree, media, ignore_errors=True)
        cls.enterClassContext(override_settings(MEDIA_ROOT=media))
        super().setUpClass()

    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.owner = make_user("olga", team=cls.team, role="owner")
        cls.campaign = committed_campaign(cls.team, cls.owner, lots=0, automatic_rules=True)
        item = cls.campaign.items.get(name="baseline")
        _key, cls.raw = issue_ingest_key(
            campaign=cls.campaign, acting_user=cls.owner, item=item, kind="pilot"
        )
        cls.running, _ = ingest.open_run(cls.campaign, run_id="r-1", variant=item, kind="pilot")
        cls.closed = committed_campaign(cls.team, cls.owner, lots=0, title="closed one")
        closed_item = cls.closed.items.get(name="baseline")
        ingest.open_run(cls.closed, run_id="c-1", variant=closed_item, kind="pilot")
        close_campaign(
            campaign=cls.closed, acting_user=cls.owner, conclusion="done", stop_running=True
        )

    def setUp(self) -> None:
        clear_cache()  # the throttle's buckets: this test sends many requests on purpose
        self.callers = {
            "ingest key": Client(
                HTTP_AUTHORIZATION=f"Bearer {self.raw}", raise_request_exception=False
            ),
            "user token": Client(raise_request_exception=False, **token_header(self.owner)),
        }
        self.names = {"run": "r-1", "exp": str(self.campaign.pk)}
        self.failures: list[str] = []

    def send(self, client: Client, method: str, url: str, body: bytes = b"", **extra: Any) -> Any:
        with transaction.atomic():
            if method == "GET":
                response = client.get(url, **extra)
            else:
                response = client.generic(
                    method, url, body, content_type="application/json", **extra
                )
            transaction.set_rollback(True)
        return response

    def check(self, label: str, response: Any) -> None:
        problem = ""
        if response.status_code >= 500:
            problem = f"{response.status_code}"
        elif response.status_code >= 400:
            try:
                body = json.loads(response.content)
            except ValueError:
                body = None
            if not (isinstance(body, dict) and "error_code" in body and "message" in body):
                problem = f"{response.status_code} not MLflow's JSON: {response.content[:80]!r}"
        if problem:
            self.failures.append(f"{label}: {problem}")

    def assert_no_failures(self) -> None:
        self.assertEqual(self.failures, [], f"{len(self.failures)} bad answers")

    def test_every_json_route_with_every_bad_field(self) -> None:
        for who, client in self.callers.items():
            for route, (method, template) in ROUTES.items():
                for label, body in _variants(_fill(template, self.names)):
                    if method == "GET":
                        response = self.send(client, "GET", f"{M}{route}?{_query(body)}")
                    else:
                        raw = json.dumps(body, ensure_ascii=True, allow_nan=True).encode()
                        response = self.send(client, method, f"{M}{route}", raw)
                    self.check(f"{who} {method} {route} {label}", response)
        self.assert_no_failures()

    def test_bodies_that_are_not_an_object(self) -> None:
        bodies = [b"[]", b"1", b'"x"', b"null", b"{", b"\xff\xfe", b'{"run_id": "\\ud800"}', b"{}"]
        for route in ROUTES:
            for body in bodies:
                response = self.send(self.callers["ingest key"], "POST", f"{M}{route}", body)
                self.check(f"POST {route} {body!r}", response)
        self.assert_no_failures()

    def test_logged_model_routes_with_bad_ids(self) -> None:
        client = self.callers["user token"]
        for model_id in ["²", "%00", "%ED%A0%80", "x" * 300, "m-1"]:
            for method, tail, body in [
                ("GET", "", b""),
                ("PATCH", "", b'{"status": "READY"}'),
                ("DELETE", "", b""),
                ("PATCH", "/tags", b'{"tags": [{"key": "a", "value": "b"}]}'),
                ("DELETE", "/tags/%00", b""),
                ("POST", "/params", b'{"params": [{"key": "\\u0000", "value": "b"}]}'),
            ]:
                url = f"{M}logged-models/{model_id}{tail}"
                self.check(f"{method} {url}", self.send(client, method, url, body))
        self.assert_no_failures()

    def test_artifact_paths_names_and_a_closed_campaigns_run(self) -> None:
        exp, closed = self.campaign.pk, self.closed.pk
        client = self.callers["user token"]
        paths = [
            f"{exp}/r-1/artifacts/ok.txt",
            f"{exp}/r-1/artifacts/{'n' * 256}.txt",
            f"{exp}/r-1/artifacts/{'é' * 130}.txt",
            f"{exp}/r-1/artifacts/a%00b",
            f"{exp}/r-1/artifacts/%ED%A0%80",
            "²/r-1/artifacts/a.txt",
            f"{exp}/²/artifacts/a.txt",
            f"{exp}/r-1%00/artifacts/a.txt",
            f"{exp}/{'r' * 300}/artifacts/a.txt",
            f"{exp}/models/²/artifacts/a.txt",
            f"{closed}/c-1/artifacts/late.txt",
        ]
        for path in paths:
            for method in ("PUT", "GET"):
                response = self.send(client, method, f"{A}/{path}", b"data")
                self.check(f"{method} {path[:80]}", response)
            listing = self.send(client, "GET", f"{A}?path={path}")
            self.check(f"list {path[:80]}", listing)
        self.assert_no_failures()

    def test_a_huge_end_time_is_refused_not_a_crash(self) -> None:
        for end_time in [10**20, "99999999999999999999", -(10**20), 2**63 - 1, "²", 1.5]:
            body = {"run_id": "r-1", "status": "FINISHED", "end_time": end_time}
            response = self.send(
                self.callers["ingest key"], "POST", f"{M}runs/update", json.dumps(body).encode()
            )
            self.check(f"end_time={end_time!r}", response)
        self.assert_no_failures()
        self.assertEqual(Run.objects.get(pk=self.running.pk).status, "running")

"""The schema fuzzing's own `ignored_auth` (schema_fuzz.py): it still fails an operation that
answers without its credentials, and once an operation has refused a missing and a bad one it
sends no more probes for it, as schemathesis's own runner does."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

import pytest
import schemathesis
from schemathesis.core.failures import FailureGroup

from campaigns.tests import schema_fuzz

SCHEMA = {
    "openapi": "3.0.3",
    "info": {"title": "probe", "version": "1"},
    "components": {
        "securitySchemes": {"token": {"type": "apiKey", "in": "header", "name": "Authorization"}}
    },
    "security": [{"token": []}],
    "paths": {
        path: {"get": {"responses": {"200": {"description": "ok"}, "401": {"description": "no"}}}}
        for path in ("/enforced", "/open")
    },
}


class App:
    """A WSGI app that serves SCHEMA, refuses /enforced without the good token, and records
    the Authorization header of every request to its paths."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    def __call__(self, environ: dict[str, Any], start: Callable[..., Any]) -> Iterable[bytes]:
        path, auth = environ["PATH_INFO"], environ.get("HTTP_AUTHORIZATION", "")
        if path == "/schema.json":
            start("200 OK", [("Content-Type", "application/json")])
            return [json.dumps(SCHEMA).encode()]
        self.seen.append((path, auth))
        refused = path == "/enforced" and auth != "Token good"
        start("401 Unauthorized" if refused else "200 OK", [("Content-Type", "application/json")])
        return [b"{}"]


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch) -> App:
    monkeypatch.setattr(schema_fuzz, "_AUTH_ENFORCED", set())
    return App()


def send(app: App, path: str) -> None:
    schema = schemathesis.openapi.from_wsgi("/schema.json", app)
    case = schema[path]["GET"].Case(headers={"Authorization": "Token good"})
    case.call_and_validate(checks=[schema_fuzz.ignored_auth])


def test_an_operation_that_answers_without_credentials_still_fails(app: App) -> None:
    with pytest.raises(FailureGroup) as caught:
        send(app, "/open")
    assert [type(failure).__name__ for failure in caught.value.exceptions] == ["IgnoredAuth"]
    send(app, "/enforced")  # another operation is still probed, and passes
    assert ("/enforced", "") in app.seen


def test_an_operation_that_refused_once_is_not_probed_again(app: App) -> None:
    send(app, "/enforced")
    probes = [auth for path, auth in app.seen if auth != "Token good"]
    assert len(probes) >= 2  # without a credential, and with a bad one
    app.seen.clear()
    send(app, "/enforced")
    assert app.seen == [("/enforced", "Token good")]


def test_the_harness_sends_every_check_with_ignored_auth_replaced() -> None:
    names = [check.__name__ for check in schema_fuzz.CHECKS]
    assert names.count("ignored_auth") == 1
    assert schema_fuzz._IGNORED_AUTH not in schema_fuzz.CHECKS
    assert schema_fuzz.ignored_auth in schema_fuzz.CHECKS

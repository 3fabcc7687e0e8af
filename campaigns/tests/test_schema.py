"""The OpenAPI document holds: schemathesis drives every /api/v1/ operation in-process (WSGI),
authenticated, with every check it has: no answer may be a 5xx or fall outside the document,
what the schema forbids is refused and what it allows is accepted (or refused by a documented
business rule).

Path parameters mostly point at real objects (a draft campaign, a committed one with a run),
so the generated bodies reach validation and the database instead of stopping at a 404.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from django.core import signals
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.checks import CHECKS as REGISTRY
from schemathesis.checks import load_all_checks
from schemathesis.core.parameters import ParameterLocation

from campaigns.models import Run, Team
from campaigns.tests.factories import clear_cache, committed_campaign, make_campaign, make_user
from config.wsgi import application

load_all_checks()
# Every check schemathesis has, two of them told which answers this API documents (each list is
# schemathesis's default plus one status):
# - negative_data_rejection: a request the schema forbids must be refused; a metric batch over
#   the schema's maxItems (10,000 points) is refused with 413 (docs/api.md), a refusal too.
# - positive_data_acceptance: a schema-valid request may still break a business rule the schema
#   cannot state: a well-formed id of an object that does not exist ({"team": 0}, {"rule": 0})
#   is a 400 naming the field (a_valid_request_refused_with_400_names_the_field holds it to
#   that); a missing object in the path is a 404 and a state conflict (a committed plan, a
#   stopped run) a 409, both in the default list. Any other 4xx still fails the check; a 5xx is
#   not_a_server_error's to report.
CHECKS = REGISTRY.get_all()
REFUSALS = ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429"]
ACCEPTANCES = ["2xx", "3xx", "400", "401", "403", "404", "409", "429"]
CONFIG = schemathesis.Config.from_dict(
    {
        "checks": {
            "negative_data_rejection": {"expected-statuses": [*REFUSALS, "5xx"]},
            "positive_data_acceptance": {"expected-statuses": [*ACCEPTANCES, "5xx"]},
        }
    }
)


def a_valid_request_refused_with_400_names_the_field(ctx: Any, response: Any, case: Any) -> None:
    """The 400 positive_data_acceptance lets through is a business-rule answer in DRF's shape,
    naming what it refuses ({"team": [...]}), never a bare {"detail": ...} for a valid body."""
    if case.meta is None or not case.meta.generation.mode.is_positive:
        return
    if response.status_code != 400:
        return
    body = response.json()
    named = set(body) - {"detail"} if isinstance(body, dict) else set()
    assert named, f"A schema-valid request was refused without naming a field: {body!r}"


@pytest.fixture
def api_world(db: None) -> dict[str, Any]:
    """One team's objects for the generated requests to land on, and its owner's token."""
    from campaigns.models import ApiToken

    clear_cache()  # the throttle's buckets
    team = Team.objects.create(name="schema")
    owner = make_user("owner", team=team, role="owner")
    committed = committed_campaign(team, owner, lots=0, automatic_rules=True)
    draft = make_campaign(team, title="a draft")
    run = Run.objects.create(
        team=team,
        campaign=committed,
        run_id="run-1",
        config={},
        config_digest=Run.digest_config({}),
    )
    return {
        "authorization": f"Token {ApiToken.issue(owner)[1]}",
        "draft": draft.pk,
        "committed": committed.pk,
        "stage": committed.stages.get().pk,
        "run": run.run_id,
    }


@pytest.fixture
def in_process_requests() -> Iterator[None]:
    """Keep the test's database connection across WSGI requests, as Django's test client does:
    Django closes connections at the end of a request, and that would end the test transaction
    (PostgreSQL; an in-memory SQLite database is never closed)."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


@pytest.fixture
def api_schema(api_world: dict[str, Any], in_process_requests: None) -> Any:
    schema = schemathesis.openapi.from_wsgi(
        "/api/v1/schema/",
        application,
        config=schemathesis.Config.from_dict(
            {
                "checks": {
                    "positive_data_acceptance": {
                        "expected-statuses": [
                            "2xx",
                            "3xx",
                            "400",
                            "401",
                            "403",
                            "404",
                            "409",
                            "429",
                            "5xx",
                        ]
                    },
                    "negative_data_rejection": {
                        "expected-statuses": [
                            "400",
                            "401",
                            "403",
                            "404",
                            "405",
                            "406",
                            "409",
                            "413",
                            "415",
                            "422",
                            "428",
                            "429",
                            "5xx",
                        ]
                    },
                }
            }
        ),
        headers={"Authorization": api_world["authorization"]},
    )
    return schema.include(path_regex=r"^/api/v1/").exclude(path_regex=r"^/api/v1/(schema|docs)/")


lazy_schema = schemathesis.pytest.from_fixture("api_schema")


def _mutated(case: Any, location: ParameterLocation) -> bool:
    """Whether this is a negative case that broke the schema in `location`: the harness then
    leaves that part as generated, or it would send a valid request and expect a refusal."""
    return case.meta is not None and case.meta.is_negative_at(location)


def _aim(case: Any, world: dict[str, Any]) -> None:
    """Point three cases in four at real objects; the fourth keeps its generated ids (404s)."""
    params = case.path_parameters
    if not params or _mutated(case, ParameterLocation.PATH):
        return
    if int(hashlib.sha256(repr(sorted(params.items())).encode()).hexdigest(), 16) % 4 == 0:
        return
    drafting = case.method.upper() == "PATCH" or case.path.endswith(
        ("/variants/", "/stop-rules/", "/stages/", "/commit/")
    )
    for name in ("id", "campaign_id"):
        if name in params:
            params[name] = world["draft"] if drafting else world["committed"]
    if "stage_id" in params:
        params["stage_id"] = world["stage"]
    if "run_id" in params:
        params["run_id"] = world["run"]


@lazy_schema.parametrize()
@settings(
    max_examples=50,
    deadline=None,
    # The same examples every run: a failure is reproduced by running the test again, and a
    # pass means the same thing from one run to the next.
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
def test_every_operation_answers_within_its_schema_and_never_5xx(
    case: Any, api_world: dict[str, Any]
) -> None:
    _aim(case, api_world)
    if _mutated(case, ParameterLocation.HEADER):
        # The generated headers as they are (a malformed Authorization or Idempotency-Key):
        # replacing them with good ones would make the request valid.
        case.call_and_validate(checks=[*CHECKS, a_valid_request_refused_with_400_names_the_field])
        return
    # Generated keys repeat ("0", "a"...): kept, most requests would be 422 replays of another
    # body and never reach the view. Idempotency has its own tests (test_idempotency.py).
    if case.headers:
        case.headers.pop("Idempotency-Key", None)
    case.call_and_validate(
        headers={"Authorization": api_world["authorization"]},
        checks=[*CHECKS, a_valid_request_refused_with_400_names_the_field],
    )


def test_an_invalid_max_points_is_a_400_with_or_without_a_metric_name(
    api_world: dict[str, Any],
) -> None:
    """The generated case that once answered 200: `max_points=<junk>` without `name`."""
    from django.test import Client

    client = Client(HTTP_AUTHORIZATION=api_world["authorization"])
    url = f"/api/v1/runs/{api_world['run']}/metrics/"
    for query in ("?max_points=junk", "?max_points=1", "?name=loss&max_points=junk"):
        answer = client.get(url + query)
        assert answer.status_code == 400, (query, answer.content)
        assert "max_points" in answer.json(), query
    assert client.get(url + "?x=money").status_code == 400
    assert client.get(url).status_code == 200

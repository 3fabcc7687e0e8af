"""The schemathesis harness the schema tests share: every check schemathesis has, the two
expected-status lists this API documents, the world of objects the generated requests land on,
and how a case is aimed and sent.

The operations are split between two test files (campaign paths, and every other path) so the
two xdist workers share the fuzzing instead of one of them holding it all (issue 16: tests that
run fast). Each operation gets ``MAX_EXAMPLES`` derandomized examples.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import CHECKS as REGISTRY
from schemathesis.checks import load_all_checks
from schemathesis.core.parameters import ParameterLocation

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
_ALL_CHECKS = REGISTRY.get_all()
_IGNORED_AUTH = next(check for check in _ALL_CHECKS if check.__name__ == "ignored_auth")
# The operations whose missing and invalid credentials were already refused in this process.
_AUTH_ENFORCED: set[str] = set()


def ignored_auth(ctx: Any, response: Any, case: Any) -> bool | None:
    """schemathesis's `ignored_auth`, confirmed once per operation as its own runner does
    (`auth_enforced_operations`: enforcement belongs to the operation, not the case). Called
    through `call_and_validate` it re-sent every successful case twice more, without and with
    a bad credential: one request in seven of the fuzzing, each proving nothing new."""
    ctx.auth_enforced_operations = _AUTH_ENFORCED
    return _IGNORED_AUTH(ctx, response, case)  # type: ignore[no-any-return]


CHECKS = [ignored_auth if check is _IGNORED_AUTH else check for check in _ALL_CHECKS]
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


# Examples per operation: 30 derandomized cases (positive and negative) by default;
# SCHEMA_FUZZ_EXAMPLES=500 makes a deep run of the same tests.
MAX_EXAMPLES = int(os.environ.get("SCHEMA_FUZZ_EXAMPLES", "30"))
FUZZ_SETTINGS = settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    # The same examples every run: a failure is reproduced by running the test again, and a
    # pass means the same thing from one run to the next.
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def api_schema_for(world: dict[str, Any]) -> Any:
    """The /api/v1/ document served in-process, authenticated as the world's owner. Each test
    file narrows it on its lazy schema (`from_fixture(...).exclude(...)`): filters set on the
    fixture's schema do not reach the generated tests, and two `include`s add up rather than
    narrow, so each file states what it leaves out."""
    return schemathesis.openapi.from_wsgi(
        "/api/v1/schema/",
        application,
        config=CONFIG,
        headers={"Authorization": world["authorization"]},
    )


# What no test file fuzzes: the schema and the docs pages themselves.
NOT_FUZZED = r"^/api/v1/(schema|docs)/"


def mutated(case: Any, location: ParameterLocation) -> bool:
    """Whether this is a negative case that broke the schema in `location`: the harness then
    leaves that part as generated, or it would send a valid request and expect a refusal."""
    return case.meta is not None and case.meta.is_negative_at(location)


def aim(case: Any, world: dict[str, Any]) -> None:
    """Point three cases in four at real objects; the fourth keeps its generated ids (404s)."""
    params = case.path_parameters
    if not params or mutated(case, ParameterLocation.PATH):
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


def send_case(case: Any, api_world: dict[str, Any]) -> None:
    """Aim the case at the world and send it with every check."""
    aim(case, api_world)
    if mutated(case, ParameterLocation.HEADER):
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


def fuzz_module(leaves_out: str) -> tuple[Any, Any]:
    """The fixture and the test a schema test file binds at module level (as ``api_schema``
    and its ``test_…`` name): every /api/v1/ operation but those ``leaves_out`` (a path
    regex) matches, each sent with every check."""

    @pytest.fixture
    def api_schema(api_world: dict[str, Any], in_process_requests: None) -> Any:
        return api_schema_for(api_world)

    lazy = (
        schemathesis.pytest.from_fixture("api_schema")
        .exclude(path_regex=NOT_FUZZED)
        .exclude(path_regex=leaves_out)
    )

    @lazy.parametrize()
    @FUZZ_SETTINGS
    def test(case: Any, api_world: dict[str, Any]) -> None:
        send_case(case, api_world)

    return api_schema, test

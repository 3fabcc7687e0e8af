"""The OpenAPI document holds for every /api/v1/campaigns/ operation: schemathesis drives each
in-process (WSGI), authenticated, with every check it has (schema_fuzz.py): no answer is a 5xx
or falls outside the document, what the schema forbids is refused and what it allows is accepted
(or refused by a documented business rule). Path parameters mostly point at real objects (a
draft campaign, a committed one with a run), so bodies reach validation and the database."""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis

from campaigns.tests.schema_fuzz import FUZZ_SETTINGS, NOT_FUZZED, api_schema_for, send_case


@pytest.fixture
def api_schema(api_world: dict[str, Any], in_process_requests: None) -> Any:
    return api_schema_for(api_world)


lazy_schema = (
    schemathesis.pytest.from_fixture("api_schema")
    .exclude(path_regex=NOT_FUZZED)
    .exclude(path_regex=r"^/api/v1/(?!campaigns/)")
)


@lazy_schema.parametrize()
@FUZZ_SETTINGS
def test_every_campaign_operation_answers_within_its_schema_and_never_5xx(
    case: Any, api_world: dict[str, Any]
) -> None:
    send_case(case, api_world)

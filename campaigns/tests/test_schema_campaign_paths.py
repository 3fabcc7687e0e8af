"""The OpenAPI document holds for every /api/v1/campaigns/ operation: schemathesis drives each
in-process (WSGI), authenticated, with every check it has (schema_fuzz.py): no answer is a 5xx
or falls outside the document, what the schema forbids is refused and what it allows is accepted
(or refused by a documented business rule). Path parameters mostly point at real objects (a
draft campaign, a committed one with a run), so bodies reach validation and the database."""

from __future__ import annotations

from campaigns.tests.schema_fuzz import fuzz_module

# Every operation but those outside the campaign paths.
SCHEMA = fuzz_module(leaves_out=r"^/api/v1/(?!campaigns/)")
api_schema = SCHEMA[0]
test_every_campaign_operation_answers_within_its_schema_and_never_5xx = SCHEMA[1]

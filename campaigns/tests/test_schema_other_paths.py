"""The OpenAPI document holds for every /api/v1/ operation outside the campaign paths (runs,
estimates, teams, reports, health): as test_schema_campaign_paths.py, the same harness
(schema_fuzz.py); and the generated case that once answered 200 as a fixed test."""

from __future__ import annotations

from typing import Any

from campaigns.tests.schema_fuzz import fuzz_module

# Every operation but the campaign paths.
SCHEMA = fuzz_module(leaves_out=r"^/api/v1/campaigns/")
api_schema = SCHEMA[0]
test_every_other_operation_answers_within_its_schema_and_never_5xx = SCHEMA[1]


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

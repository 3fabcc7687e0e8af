"""Helpers for the API tests: clients that authenticate as a real caller would, and a committed
campaign with one stop rule of each automatic kind."""

from __future__ import annotations

import json
from typing import Any

from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from campaigns.models import Campaign, IngestKey, StopRule, Team
from campaigns.services import commit_plan
from campaigns.tests.factories import make_plannable


def as_user(user: Any) -> APIClient:
    """A client sending `Authorization: Token <key>`, as scripts do."""
    token, _ = Token.objects.get_or_create(user=user)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def as_key(raw: str) -> APIClient:
    """A client sending `Authorization: Bearer <ingest key>`, as training loops do."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


def post(client: APIClient, url: str, body: Any = None, *, key: str | None = None) -> Any:
    """POST `body` as Python's json module writes it (NaN and ±Infinity as bare tokens), with
    `key` as its Idempotency-Key."""
    data = b"" if body is None else json.dumps(body).encode()
    headers = {"Idempotency-Key": key} if key is not None else {}
    return client.post(url, data=data, content_type="application/json", headers=headers)


def patch(client: APIClient, url: str, body: Any) -> Any:
    return client.patch(url, data=json.dumps(body), content_type="application/json")


def committed_campaign(team: Team, user: Any, **fields: Any) -> tuple[Campaign, dict[str, int]]:
    """A committed campaign with the four automatic stop rules; returns it and the rule ids."""
    campaign = make_plannable(team, **fields)
    rules = {"non_finite_loss": StopRule.objects.get(campaign=campaign).pk}
    rules["metric_threshold"] = StopRule.objects.create(
        campaign=campaign, kind="metric_threshold", metric="val_loss", comparator="gt", threshold=10
    ).pk
    rules["input_truncated"] = StopRule.objects.create(campaign=campaign, kind="input_truncated").pk
    rules["no_usable_resume"] = StopRule.objects.create(
        campaign=campaign, kind="no_usable_resume"
    ).pk
    commit_plan(campaign=campaign, user=user)
    return campaign, rules


def ingest_key(campaign: Campaign, user: Any = None) -> str:
    _key, raw = IngestKey.issue(campaign, user=user)
    return raw


def points(*triples: tuple[str, int, Any]) -> dict[str, Any]:
    return {"points": [{"name": n, "step": s, "value": v} for n, s, v in triples]}

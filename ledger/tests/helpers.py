"""Builders shared by the ledger tests: a committed campaign with the seed's 3-day lot, users
of each role with API tokens, and runs as the run-logging API records them."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from campaigns.models import Campaign, IngestKey, PlannedItem, Run, Team
from campaigns.services import commit_plan
from campaigns.tests.factories import make_plannable, make_user
from catalog.models import RentalPlan
from catalog.services import seed_catalog

GOOD_SHA = "a" * 64
LOT_3_DAYS = "IteraGPU", "RTX 4090, 3 days"


def committed_campaign(team: Team, *, lots: int = 1, **fields: Any) -> Campaign:
    """The factory's plannable campaign with `lots` RTX 4090 3-day lots, committed."""
    campaign = make_plannable(team, **fields)
    if not RentalPlan.objects.filter(provider=LOT_3_DAYS[0], name=LOT_3_DAYS[1]).exists():
        # A TransactionTestCase flushes the catalog its data migration seeded; put it back.
        seed_catalog()
    plan = RentalPlan.objects.get(provider=LOT_3_DAYS[0], name=LOT_3_DAYS[1])
    if lots:
        campaign.lots.create(plan=plan, quantity=lots)
    commit_plan(campaign=campaign)
    return campaign


@contextmanager
def celery_eager() -> Iterator[None]:
    """Run tasks inline even when a broker is configured (the PostgreSQL run): these tests check
    what the report says; test_worker.py checks the transport on a real worker."""
    from config.celery import app

    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    try:
        yield
    finally:
        app.conf.task_always_eager = previous


def client_for(user: Any) -> APIClient:
    token, _ = Token.objects.get_or_create(user=user)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def ingest_client(campaign: Campaign) -> APIClient:
    _key, raw = IngestKey.issue(campaign)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


def make_run(
    campaign: Campaign,
    run_id: str,
    *,
    variant: PlannedItem | None = None,
    kind: str = "full",
    status: str = "completed",
    observed_hours: str | None = None,
    stop_reason: str = "",
) -> Run:
    """A run as POST /runs/ then /finish/ (or /stop/) leave it."""
    config = {"run": run_id}
    return Run.objects.create(
        team=campaign.team,
        campaign=campaign,
        run_id=run_id,
        variant=variant,
        kind=kind,
        config=config,
        config_digest=Run.digest_config(config),
        status=status,
        stop_reason=stop_reason,
        observed_hours=Decimal(observed_hours) if observed_hours is not None else None,
    )


def deliverable_body(corpus: str = "tickets", revision: str = "abc123", **extra: Any) -> dict:
    body: dict[str, Any] = {
        "kind": "predictions",
        "corpus": {"name": corpus, "revision": revision},
        "files": [{"path": "outputs/predictions.jsonl", "size_bytes": 1024, "sha256": GOOD_SHA}],
        "expected_ids_ok": True,
        "reload_verified": True,
    }
    body.update(extra)
    return body


__all__ = ["make_user"]

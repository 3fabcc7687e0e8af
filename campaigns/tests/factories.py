"""The one module of test builders and helpers, shared by every app's tests.

Users (without a usable password unless a test signs in through a form), teams' campaigns
(draft, plannable, committed), runs as the run-logging API records them, API clients that
authenticate as real callers do, and `celery_eager` for tests that check what a task writes
rather than its transport.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from campaigns.models import (
    Campaign,
    Membership,
    MetricPoint,
    PlannedItem,
    Run,
    RunKind,
    Stage,
    StopRule,
    Team,
    ThroughputSample,
)
from campaigns.services import ingest, metric_store
from campaigns.services.campaigns import create_campaign
from campaigns.services.items import create_item
from campaigns.services.keys import issue_api_token, issue_ingest_key
from campaigns.services.lots import reserve_lot
from campaigns.services.plans import commit_plan
from campaigns.services.run_events import announce_run_save
from campaigns.services.stages import add_stage
from campaigns.services.stop_rules import add_stop_rule
from catalog.models import RentalPlan
from catalog.services import seed_catalog

GOOD_SHA = "a" * 64
LOT_3_DAYS = "IteraGPU", "RTX 4090, 3 days"

# --- Users and teams ---------------------------------------------------------------------------


def make_user(  # type: ignore[no-untyped-def]
    username: str,
    *,
    team: Team | None = None,
    role: str = "planner",
    password: str | None = None,
    **extra: Any,
):
    """A staff user, a member of `team` with `role`. No usable password unless `password` is
    given (only the browser tests sign in through the login form; the rest force_login or send
    a token), so the suite hashes no password it never checks."""
    user = get_user_model().objects.create_user(
        username=username, password=password, is_staff=True, **extra
    )
    if team is not None:
        Membership.objects.create(team=team, user=user, role=role)
    return user


# --- Campaigns ---------------------------------------------------------------------------------


def make_campaign(team: Team, **fields: Any) -> Campaign:
    defaults: dict[str, Any] = {
        "title": "Does LoRA beat full fine-tuning?",
        "question": "Does variant A beat the baseline by 1 F1?",
        "corpus_name": "tickets",
        "corpus_revision": "abc123",
        "window_hours": Decimal("72"),
        "budget": Decimal("110.00"),
        "currency": "USD",
    }
    defaults.update(fields)
    # Through the services, as the admin and the API plan: the estimates hear of each change.
    return create_campaign(**defaults, team=team)


def make_plannable(team: Team, **fields: Any) -> Campaign:
    """A campaign that commit() accepts: a mandatory baseline, a useful variant, a stop rule."""
    campaign = make_campaign(team, **fields)
    create_item(
        campaign=campaign,
        name="baseline",
        role="baseline",
        tier="mandatory",
        planned_hours=Decimal("10"),
    )
    create_item(
        campaign=campaign,
        name="variant A",
        role="variant",
        tier="useful",
        planned_hours=Decimal("12"),
        config={"lr": 2e-4},
    )
    add_stop_rule(campaign=campaign, kind="non_finite_loss", metric="loss")
    add_stage(
        campaign=campaign,
        name="train",
        kind="training",
        machine=True,
        resource="gpu-a",
        planned_hours=Decimal("22"),
    )
    return campaign


def grow_plan(campaign: Campaign, items: int) -> None:
    """Add items named v<i> until the campaign has ``items``, each with a training stage
    ``train-v<i>`` on one of four GPUs following the previous one (bulk: a large plan's
    pages, issue 21)."""
    have = campaign.items.count()
    made = PlannedItem.objects.bulk_create(
        PlannedItem(campaign=campaign, name=f"v{i}", planned_hours=Decimal("2"), rationale="r")
        for i in range(have, items)
    )
    stages = Stage.objects.bulk_create(
        Stage(
            campaign=campaign,
            name=f"train-{item.name}",
            kind="training",
            variant=item,
            planned_hours=Decimal("2"),
            resource=f"gpu-{i % 4}",
        )
        for i, item in enumerate(made)
    )
    through = Stage.depends_on.through
    through.objects.bulk_create(
        through(from_stage_id=later.pk, to_stage_id=earlier.pk)
        for earlier, later in itertools.pairwise(stages)
    )


def committed_campaign(
    team: Team,
    user: Any = None,
    *,
    lots: int = 1,
    automatic_rules: bool = False,
    **fields: Any,
) -> Campaign:
    """The plannable campaign, committed by `user`, with `lots` of the seed's RTX 4090 3-day
    plan reserved, and with `automatic_rules` one stop rule of each automatic kind (their ids:
    `rule_ids`)."""
    campaign = make_plannable(team, **fields)
    if automatic_rules:
        add_stop_rule(
            campaign=campaign,
            kind="metric_threshold",
            metric="val_loss",
            comparator="gt",
            threshold=10,
        )
        add_stop_rule(campaign=campaign, kind="input_truncated")
        add_stop_rule(campaign=campaign, kind="no_usable_resume")
    if lots:
        if not RentalPlan.objects.filter(provider=LOT_3_DAYS[0], name=LOT_3_DAYS[1]).exists():
            # A TransactionTestCase flushes the catalog its data migration seeded; put it back.
            seed_catalog()
        plan = RentalPlan.objects.get(provider=LOT_3_DAYS[0], name=LOT_3_DAYS[1])
        reserve_lot(campaign=campaign, plan=plan, quantity=lots)
    commit_plan(campaign=campaign, acting_user=user)
    return campaign


def rule_ids(campaign: Campaign) -> dict[str, int]:
    """The campaign's stop rules by kind (committed_campaign makes at most one of each)."""
    return {rule.kind: rule.pk for rule in StopRule.objects.filter(campaign=campaign)}


# --- Runs --------------------------------------------------------------------------------------


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
    run = Run.objects.create(
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
    # What the finish service tells the layers above (the estimates mark the forecast stale).
    announce_run_save(run, ["status", "observed_hours"] if observed_hours is not None else [])
    return run


def add_points(run: Run, triples: Any, *, when: Any = None) -> None:
    """Store ``(name, step, value)`` points on ``run`` whatever its status, with their
    summaries and rollups, as the ingest stores them (no stop rules applied)."""
    from django.utils import timezone

    when = when or timezone.now()
    rows = [(name, step, float(value)) for name, step, value in triples]
    tokens = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}
    keys = metric_store.record_points(run.pk, rows, when)
    seqs = {name: seq for name, (_key, seq) in keys.items()}
    points = []
    for name, step, value in rows:
        points.append(
            MetricPoint(
                run=run,
                key_id=keys[name][0],
                step=step,
                seq=seqs[name],
                value=value if math.isfinite(value) else None,
                non_finite="" if math.isfinite(value) else tokens[repr(value)],
                created_at=when,
            )
        )
        seqs[name] += 1
    MetricPoint.objects.bulk_create(points, batch_size=2000)


def pilot(item: PlannedItem, *, tokens_per_second: float, gpus: int = 1) -> ThroughputSample:
    """A pilot run of `item` with one throughput sample (10 minutes measured)."""
    run = Run.objects.create(
        team=item.campaign.team,
        campaign=item.campaign,
        run_id=f"pilot-{item.pk}-{Run.objects.count()}",
        variant=item,
        kind=RunKind.PILOT,
        config={},
        config_digest="0" * 64,
    )
    # Through the service, as the API records it: the estimates hear of the measurement.
    return ingest.record_throughput(
        run, tokens_per_second=tokens_per_second, gpus=gpus, measured_seconds=600
    )


def deliverable_body(
    corpus: str = "tickets", revision: str = "abc123", **extra: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "kind": "predictions",
        "corpus": {"name": corpus, "revision": revision},
        "files": [{"path": "outputs/predictions.jsonl", "size_bytes": 1024, "sha256": GOOD_SHA}],
        "expected_ids_ok": True,
        "reload_verified": True,
    }
    body.update(extra)
    return body


def points(*triples: tuple[str, int, Any]) -> dict[str, Any]:
    return {"points": [{"name": n, "step": s, "value": v} for n, s, v in triples]}


# --- API clients -------------------------------------------------------------------------------


def token_header(user: Any) -> dict[str, Any]:
    """`Authorization: Token <key>` as keyword arguments of Django's test client."""
    return {"HTTP_AUTHORIZATION": f"Token {api_token(user)}"}


def api_token(user: Any) -> str:
    """A new API token of `user` (the raw key; only its digest is stored)."""
    _token, raw = issue_api_token(owner=user)
    return raw


def as_user(user: Any) -> APIClient:
    """A client sending `Authorization: Token <key>`, as scripts do."""
    client = APIClient()
    client.credentials(**token_header(user))
    return client


def as_key(raw: str) -> APIClient:
    """A client sending `Authorization: Bearer <ingest key>`, as training loops do."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


def ingest_key(campaign: Campaign, user: Any = None) -> str:
    _key, raw = issue_ingest_key(campaign=campaign, acting_user=user)
    return raw


def ingest_client(campaign: Campaign) -> APIClient:
    return as_key(ingest_key(campaign))


def post(client: APIClient, url: str, body: Any = None, *, key: str | None = None) -> Any:
    """POST `body` as Python's json module writes it (NaN and ±Infinity as bare tokens), with
    `key` as its Idempotency-Key."""
    data = b"" if body is None else json.dumps(body).encode()
    headers = {"Idempotency-Key": key} if key is not None else {}
    return client.post(url, data=data, content_type="application/json", headers=headers)


def patch(client: APIClient, url: str, body: Any) -> Any:
    return client.patch(url, data=json.dumps(body), content_type="application/json")


def clear_cache() -> None:
    """Empty this process's cache (the throttles' buckets). On Redis only the keys under its own
    prefix: `cache.clear()` would flush the whole Redis database, and with it the queue and the
    buckets of the other parallel test workers."""
    from django.conf import settings
    from django.core.cache import cache

    if not settings.REDIS_URL:
        cache.clear()
        return
    client = cache._cache.get_client(write=True)  # type: ignore[attr-defined]
    prefix = settings.CACHES["default"].get("KEY_PREFIX", "")
    for key in client.scan_iter(match=f"{prefix}:*"):
        client.delete(key)


# --- Celery ------------------------------------------------------------------------------------


@contextmanager
def celery_eager() -> Iterator[None]:
    """Run `.delay()` inline, as the embedded shape does, even when a broker is configured (the
    PostgreSQL run): tests in it check what a task writes; the `celery_worker` tests check the
    transport on a real worker."""
    from config.celery import app

    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    try:
        yield
    finally:
        app.conf.task_always_eager = previous

"""Fixtures the campaigns tests share: the world the schema fuzzing lands on (schema_fuzz.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.core import signals
from django.db import close_old_connections

from campaigns.models import Run, Team
from campaigns.services.keys import issue_api_token
from campaigns.tests.factories import clear_cache, committed_campaign, make_campaign, make_user


@pytest.fixture
def api_world(db: None) -> dict[str, Any]:
    """One team's objects for the generated requests to land on, and its owner's token."""

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
        "authorization": f"Token {issue_api_token(owner=owner)[1]}",
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

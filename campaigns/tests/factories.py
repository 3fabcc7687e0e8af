"""Small builders for test data: a team with members, and a plannable campaign."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.contrib.auth import get_user_model

from campaigns.models import Campaign, Membership, PlannedItem, Stage, StopRule, Team


def make_user(username: str, *, team: Team | None = None, role: str = "planner", **extra: Any):  # type: ignore[no-untyped-def]
    user = get_user_model().objects.create_user(
        username=username, password="pw-" + username, is_staff=True, **extra
    )
    if team is not None:
        Membership.objects.create(team=team, user=user, role=role)
    return user


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
    return Campaign.objects.create(team=team, **defaults)


def make_plannable(team: Team, **fields: Any) -> Campaign:
    """A campaign that commit() accepts: a mandatory baseline, a useful variant, a stop rule."""
    campaign = make_campaign(team, **fields)
    PlannedItem.objects.create(
        campaign=campaign,
        name="baseline",
        role="baseline",
        tier="mandatory",
        planned_hours=Decimal("10"),
    )
    PlannedItem.objects.create(
        campaign=campaign,
        name="variant A",
        role="variant",
        tier="useful",
        planned_hours=Decimal("12"),
        config={"lr": 2e-4},
    )
    StopRule.objects.create(campaign=campaign, kind="non_finite_loss", metric="loss")
    Stage.objects.create(
        campaign=campaign,
        name="train",
        kind="training",
        machine=True,
        resource="gpu-a",
        planned_hours=Decimal("22"),
    )
    return campaign

"""Reading the alert outbox (docs/domain.md §19.5): which rows are due, in what order a worker
takes them (team by team: each team's oldest due row before any team's second, so one team's
thousand alerts, or its slow receiver, cannot hold another team's back; and never two rows of
one channel at once), what a transport says about one, and what the team page and the API list.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Count, F, Min, Q, QuerySet, Window
from django.db.models.functions import RowNumber

from ledger.domain.alerts import label
from ledger.domain.notices import Notice
from ledger.models import AlertDelivery, DeliveryState


def lease() -> timedelta:
    return timedelta(seconds=float(getattr(settings, "ALERT_DELIVERY_LEASE_SECONDS", 300)))


def due(now: datetime) -> Q:
    """Deliveries to attempt now: never tried or failed and due, or claimed by a worker that has
    not finished within the lease (it died: the receiver deduplicates the repeat)."""
    waiting = Q(state__in=[DeliveryState.PENDING, DeliveryState.FAILED], next_attempt_at__lte=now)
    abandoned = Q(state=DeliveryState.SENDING, claimed_at__lt=now - lease())
    return waiting | abandoned


def busy_channels(now: datetime) -> Any:
    """Channels a live worker is sending to now (a NULL would empty a NOT IN: left out)."""
    return AlertDelivery.objects.filter(
        state=DeliveryState.SENDING, claimed_at__gte=now - lease(), channel_id__isnull=False
    ).values("channel_id")


def fair_due_ids(now: datetime, limit: int = 20) -> list[int]:
    """The due rows a worker should try first: ranked within their team by age, then by rank."""
    rank = Window(
        RowNumber(), partition_by=[F("team_id")], order_by=[F("next_attempt_at").asc(), F("id")]
    )
    rows = (
        AlertDelivery.objects.filter(due(now))
        .exclude(channel_id__in=busy_channels(now))
        .annotate(rank=rank)
        .order_by("rank", "next_attempt_at", "id")
        .values_list("pk", flat=True)
    )
    return list(rows[:limit])


def any_due(now: datetime) -> bool:
    return AlertDelivery.objects.filter(due(now)).exists()


def seconds_to_next(now: datetime) -> float | None:
    """Seconds until the earliest failed row is due again (None: none waits)."""
    found = AlertDelivery.objects.filter(
        state__in=[DeliveryState.PENDING, DeliveryState.FAILED]
    ).aggregate(at=Min("next_attempt_at"))["at"]
    return None if found is None else max((found - now).total_seconds(), 0.0)


def notice_for(delivery: AlertDelivery) -> Notice:
    alert = delivery.alert
    campaign = alert.campaign
    return Notice(
        delivery_id=str(delivery.delivery_id),
        alert_id=alert.pk,
        kind=alert.kind,
        kind_label=label(alert.kind),
        message=alert.message,
        campaign_id=campaign.pk,
        campaign_title=campaign.title,
        team_id=campaign.team_id,
        team_name=campaign.team.name,
        raised_at=alert.raised_at,
        resolved_at=alert.resolved_at,
        run_id=alert.run.run_id if alert.run is not None else None,
    )


def loaded(pk: int) -> AlertDelivery:
    return AlertDelivery.objects.select_related(
        "alert__campaign__team", "alert__run", "channel"
    ).get(pk=pk)


def team_deliveries(team_ids: list[int]) -> QuerySet[AlertDelivery]:
    """The deliveries of these teams, newest first, with what a list shows."""
    return (
        AlertDelivery.objects.filter(team_id__in=team_ids)
        .select_related("alert__campaign", "channel")
        .order_by("-alert__raised_at", "-id")
    )


def delivery_states(team_id: int) -> list[tuple[str, int]]:
    """How many of the team's deliveries are in each state."""
    rows = (
        AlertDelivery.objects.filter(team_id=team_id)
        .values_list("state")
        .annotate(n=Count("id"))
        .order_by("state")
    )
    return [(state, n) for state, n in rows]

"""One alert pipeline for every channel (issue 32 item 3, docs/domain.md §19): every
destination a channel row, one outbox row per alert and channel, one transport per kind, the
address policy at save and at delivery, retries only for what can succeed, Standard Webhooks
signatures, alerts for run events and team budgets; against a real HTTP receiver."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.core import mail
from django.utils import timezone
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from campaigns.models import Team
from campaigns.services.teams import create_team
from campaigns.tests.factories import (
    as_user,
    celery_eager,
    committed_campaign,
    ingest_client,
    make_user,
    rule_ids,
)
from ledger.models import Alert, AlertChannel, AlertDelivery, TeamAllowance
from ledger.selectors.alert_deliveries import fair_due_ids
from ledger.services.alert_channels import add_alert_channel
from ledger.services.alerts import scan_alerts
from ledger.services.team_budget_alerts import store_team_budget_alerts
from ledger.tasks import deliver_alerts
from ledger.tests.receiver import Receiver, receiving

SECRET = "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with receiving() as found:
        yield found


def _team(receiver: Receiver, name: str = "nlp") -> Team:
    """A team with its default e-mail channel, an owner with an address and one channel of
    every other kind pointing at the receiver (a path each)."""
    team = create_team(name=name)
    make_user(f"{name}-owner", team=team, role="owner", email=f"{name}@example.org")
    add_alert_channel(team=team, kind="webhook", target=receiver.url("/webhook"), secret=SECRET)
    add_alert_channel(team=team, kind="slack", target=receiver.url("/slack"))
    add_alert_channel(team=team, kind="teams", target=receiver.url("/teams"))
    return team


def _deliver(capture: Any, action: Any) -> Any:
    with celery_eager(), capture(execute=True):
        return action()


@pytest.mark.django_db
def test_every_channel_gets_one_outbox_row_per_alert_and_every_row_goes_out(
    receiver: Receiver, django_capture_on_commit_callbacks: Any
) -> None:
    campaign = committed_campaign(_team(receiver), budget=Decimal("40.00"))
    raised = _deliver(django_capture_on_commit_callbacks, lambda: scan_alerts(campaign=campaign))
    assert len(raised) == 2  # budget at 80% and 100%
    rows = AlertDelivery.objects.all()
    assert sorted(rows.values_list("kind", flat=True)) == sorted(
        ["email", "webhook", "slack", "teams"] * 2
    )
    assert set(rows.values_list("state", flat=True)) == {"sent"}
    assert len(mail.outbox) == 2 and mail.outbox[0].to == ["nlp@example.org"]
    assert len(receiver.bodies("/webhook")) == len(receiver.bodies("/slack")) == 2
    assert len(receiver.bodies("/teams")) == 2


@pytest.mark.django_db
def test_team_budget_alerts_are_delivered_like_any_other(
    receiver: Receiver, django_capture_on_commit_callbacks: Any
) -> None:
    team = _team(receiver)
    committed_campaign(team)  # one 47.14 USD lot this month
    start = timezone.now().date().replace(day=1)
    TeamAllowance.objects.create(
        team=team, period_kind="month", period_start=start, amount=Decimal("10"), currency="USD"
    )
    [alert] = _deliver(
        django_capture_on_commit_callbacks, lambda: store_team_budget_alerts(team_id=team.pk)
    )
    assert alert.kind == "team_budget"
    assert alert.deliveries.count() == 4
    assert set(alert.deliveries.values_list("state", flat=True)) == {"sent"}


@pytest.mark.django_db
def test_the_webhook_is_signed_as_standard_webhooks_and_a_replay_is_refused(
    receiver: Receiver, django_capture_on_commit_callbacks: Any
) -> None:
    campaign = committed_campaign(_team(receiver), budget=Decimal("40.00"))
    _deliver(django_capture_on_commit_callbacks, lambda: scan_alerts(campaign=campaign))
    [(_path, headers, body), *_] = [r for r in receiver.received if r[0] == "/webhook"]
    verified = Webhook(SECRET).verify(body, headers)  # the library, as a receiver runs it
    assert verified["type"] == "alert.budget"
    assert verified["data"]["campaign"] == {"id": campaign.pk, "title": campaign.title}
    delivery = AlertDelivery.objects.get(kind="webhook", alert_id=verified["data"]["id"])
    assert headers["webhook-id"] == str(delivery.delivery_id)
    # The same request an hour later: its timestamp is outside the receiver's tolerance.
    stale = {**headers, "webhook-timestamp": str(int(datetime.now(UTC).timestamp()) - 3600)}
    with pytest.raises(WebhookVerificationError):
        Webhook(SECRET).verify(body, stale)
    with pytest.raises(WebhookVerificationError):
        Webhook("whsec_" + "b3RoZXItc2VjcmV0LXZhbHVl").verify(body, headers)


@pytest.mark.django_db
def test_a_refusal_is_not_retried_and_a_failure_is_with_the_receivers_wait(
    receiver: Receiver, django_capture_on_commit_callbacks: Any
) -> None:
    team = create_team(name="t")
    add_alert_channel(team=team, kind="slack", target=receiver.url("/gone"))
    add_alert_channel(team=team, kind="teams", target=receiver.url("/busy"))
    AlertChannel.objects.filter(team=team, kind="email").delete()
    campaign = committed_campaign(team, budget=Decimal("40.00"))  # two alerts: 80%, 100%
    receiver.answer("/gone", 404, 410)
    receiver.answer("/busy", 429, 429, **{"Retry-After": "120"})
    _deliver(django_capture_on_commit_callbacks, lambda: scan_alerts(campaign=campaign))
    gone = AlertDelivery.objects.filter(kind="slack")
    busy = AlertDelivery.objects.filter(kind="teams")
    assert {(d.state, d.attempts, d.last_status) for d in gone} == {
        ("refused", 1, 404), ("refused", 1, 410)
    }  # fmt: skip
    assert {(d.state, d.attempts, d.last_status) for d in busy} == {("failed", 1, 429)}
    wait = (busy[0].next_attempt_at - timezone.now()).total_seconds()
    assert 100 < wait <= 120  # the receiver's Retry-After, longer than the 30 s backoff
    # Made due again, it is retried; the refused one is not.
    AlertDelivery.objects.update(next_attempt_at=timezone.now())
    with celery_eager():
        deliver_alerts.apply()
    assert {(d.state, d.attempts) for d in gone.all()} == {("refused", 1)}
    assert {(d.state, d.attempts) for d in busy.all()} == {("sent", 2)}


@pytest.mark.django_db
def test_the_address_policy_holds_at_save_and_at_delivery(
    receiver: Receiver, django_capture_on_commit_callbacks: Any
) -> None:
    team = create_team(name="t")
    owner = make_user("olga", team=team, role="owner")
    url = f"/api/v1/teams/{team.pk}/alert-channels/"
    inward = as_user(owner).post(
        url, {"kind": "webhook", "target": "http://127.0.0.1:9/x"}, format="json"
    )
    assert inward.status_code == 400 and "target" in inward.json()
    legacy = as_user(owner).post(
        url,
        {"kind": "teams", "target": "https://contoso.webhook.office.com/webhookb2/abc"},
        format="json",
    )
    assert legacy.status_code == 400 and "Workflows" in legacy.json()["target"][0]
    created = as_user(owner).post(url, {"kind": "webhook", "target": receiver.url()}, format="json")
    assert created.status_code == 201, created.json()
    assert created.json()["secret"].startswith("whsec_")  # generated, answered once
    listed = as_user(owner).get(url).json()
    assert all(c["secret"] is None and "target" not in c for c in listed)
    # Stored before a change of policy (or of DNS): delivery checks again, and refuses.
    AlertChannel.objects.filter(kind="webhook").update(target="http://127.0.0.1:9/x")
    campaign = committed_campaign(team, budget=Decimal("40.00"))
    _deliver(django_capture_on_commit_callbacks, lambda: scan_alerts(campaign=campaign))
    hooks = AlertDelivery.objects.filter(kind="webhook")
    assert {h.state for h in hooks} == {"refused"} and len(hooks) == 2
    assert "not a public address" in hooks[0].last_error
    assert receiver.received == []


@pytest.mark.django_db
def test_a_channel_gets_no_kind_it_mutes_and_run_events_reach_the_team(
    receiver: Receiver, django_capture_on_commit_callbacks: Any
) -> None:
    team = create_team(name="t")
    make_user("olga", team=team, role="owner", email="olga@example.org")
    add_alert_channel(team=team, kind="slack", target=receiver.url("/all"), muted_kinds=[])
    campaign = committed_campaign(team, automatic_rules=True)
    loop = ingest_client(campaign)
    for run_id in ("r-1", "r-2", "r-3"):
        loop.post(f"/api/v1/campaigns/{campaign.pk}/runs/", {"run_id": run_id}, format="json")

    def events() -> None:
        stopped = loop.post(
            "/api/v1/runs/r-1/metrics/",
            {"points": [{"name": "val_loss", "step": 3, "value": 12.5}]},
            format="json",
        )
        assert stopped.json()["stopped"] is True
        loop.post("/api/v1/runs/r-2/finish/", {"status": "failed"}, format="json")
        loop.post("/api/v1/runs/r-3/finish/", {"status": "completed"}, format="json")

    _deliver(django_capture_on_commit_callbacks, events)
    kinds = dict(Alert.objects.values_list("kind", "message"))
    rule = rule_ids(campaign)["metric_threshold"]
    assert f"run r-1 was stopped: rule #{rule}" in kinds["run_stopped"]
    assert "run r-2 failed" in kinds["run_failed"] and "run r-3 finished" in kinds["run_finished"]
    assert all(a.resolved_at for a in Alert.objects.all())  # events do not hold
    # The owners' e-mail mutes "run finished" (the default); the Slack channel mutes nothing.
    emailed = AlertDelivery.objects.filter(kind="email").values_list("alert__kind", flat=True)
    assert sorted(emailed) == ["run_failed", "run_stopped"]
    assert len(receiver.bodies("/all")) == 3
    assert "12.5" in json.loads(receiver.bodies("/all")[0])["blocks"][1]["text"]["text"]


@pytest.mark.django_db
def test_a_metric_crossing_the_teams_threshold_alerts_once_per_run(
    receiver: Receiver, django_capture_on_commit_callbacks: Any
) -> None:
    team = create_team(name="t")
    owner = make_user("olga", team=team, role="owner", email="olga@example.org")
    viewer = make_user("vic", team=team, role="viewer")
    url = f"/api/v1/teams/{team.pk}/metric-thresholds/"
    body = {"metric": "grad_norm", "comparator": "gt", "threshold": 100.0}
    assert as_user(viewer).post(url, body, format="json").status_code == 403
    assert (
        as_user(owner).post(url, {**body, "comparator": "near"}, format="json").status_code == 400
    )
    assert as_user(owner).post(url, body, format="json").status_code == 201
    campaign = committed_campaign(team)
    loop = ingest_client(campaign)
    loop.post(f"/api/v1/campaigns/{campaign.pk}/runs/", {"run_id": "r-1"}, format="json")
    points = [
        {"name": "grad_norm", "step": s, "value": v} for s, v in [(1, 3.0), (2, 250.0), (3, 4.0)]
    ]
    loop.post("/api/v1/runs/r-1/metrics/", {"points": points}, format="json")
    first = _deliver(django_capture_on_commit_callbacks, lambda: scan_alerts(campaign=campaign))
    again = _deliver(django_capture_on_commit_callbacks, lambda: scan_alerts(campaign=campaign))
    [alert] = first
    assert again == []
    assert alert.kind == "metric_threshold"
    assert "grad_norm reached 250.0, above the team's threshold 100.0" in alert.message
    assert len(mail.outbox) == 1


@pytest.mark.django_db
def test_deliveries_are_listed_for_the_team_only(
    receiver: Receiver, django_capture_on_commit_callbacks: Any
) -> None:
    team = _team(receiver)
    viewer = make_user("vic", team=team, role="viewer")
    outsider = make_user("otto", team=create_team(name="vision"), role="owner")
    campaign = committed_campaign(team, budget=Decimal("46.00"))
    receiver.answer("/webhook", 500)
    _deliver(django_capture_on_commit_callbacks, lambda: scan_alerts(campaign=campaign))
    url = f"/api/v1/teams/{team.pk}/alert-deliveries/"
    listed = as_user(viewer).get(url).json()["results"]
    assert len(listed) == 8  # two alerts, four channels
    failed = as_user(viewer).get(url + "?state=failed").json()["results"]
    assert [(d["kind"], d["last_status"]) for d in failed] == [("webhook", 500)]
    assert as_user(outsider).get(url).status_code == 404
    page = as_user(viewer)
    page.force_login(viewer)
    admin = page.get(f"/admin/campaigns/team/{team.pk}/change/")
    assert admin.status_code == 200
    assert b"1 failed" in admin.content and b"7 sent" in admin.content
    assert receiver.url().encode() not in admin.content  # a URL is the channel's secret
    deliveries = page.get(f"/admin/ledger/alertdelivery/?team__id__exact={team.pk}")
    assert deliveries.status_code == 200 and b"the receiver answered 500" in deliveries.content


@pytest.mark.django_db
def test_the_queue_is_fair_between_teams() -> None:
    busy, quiet = create_team(name="busy"), create_team(name="quiet")
    loud = committed_campaign(busy)
    calm = committed_campaign(quiet)
    past = timezone.now() - timedelta(minutes=5)
    alerts = [
        Alert.objects.create(campaign=loud, kind="run_silent", key=f"k{i}", message="m")
        for i in range(30)
    ]
    for alert in alerts:
        AlertDelivery.objects.create(
            alert=alert, channel=busy.alert_channels.get(), team=busy, kind="email",
            next_attempt_at=past,
        )  # fmt: skip
    late = Alert.objects.create(campaign=calm, kind="run_silent", key="k", message="m")
    row = AlertDelivery.objects.create(
        alert=late, channel=quiet.alert_channels.get(), team=quiet, kind="email"
    )
    # Thirty older rows of one team, one newer of another: the newer is taken second.
    assert fair_due_ids(timezone.now())[:2][1] == row.pk

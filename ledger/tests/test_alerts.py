"""Alerts: the conditions (pure), stored once per condition, listed, and e-mailed to the team's
owners (docs/domain.md §19; every other channel: test_alert_pipeline.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.core.management import call_command
from django.test import TestCase, override_settings
from django.utils import timezone

from campaigns.models import Checkpoint, Run, Team
from campaigns.services.teams import create_team
from campaigns.tests.factories import (
    as_user,
    celery_eager,
    committed_campaign,
    ingest_client,
    make_user,
)
from ledger.domain import alerts
from ledger.models import Alert
from ledger.services.alerts import scan_alerts
from ledger.tasks import deliver_alerts

T0 = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)


# --- The conditions, pure ---------------------------------------------------------------------


def test_a_lot_ending_soon_alerts_only_while_runs_run() -> None:
    lot = alerts.LotEnd("lot:1", "lot IteraGPU RTX 4090, 3 days", T0 + timedelta(hours=10))
    idle = alerts.CampaignFacts(now=T0, currency="USD", lots=(lot,))
    assert alerts.conditions(idle) == []
    busy = alerts.CampaignFacts(now=T0, currency="USD", lots=(lot,), running_runs=("r-1",))
    [found] = alerts.conditions(busy)
    assert (found.kind, found.key) == ("lot_ending", "lot:1")
    assert "ends in 10.0 h" in found.message and "r-1" in found.message
    assert alerts.conditions(busy, alerts.Limits(lot_hours=6)) == []


def test_a_checkpoint_left_on_the_rented_machine_alerts_before_the_lot_ends() -> None:
    lot = alerts.LotEnd("lot:1", "lot A", T0 + timedelta(hours=2))
    on_disk = alerts.LatestCheckpoint("checkpoint:9", "r-1", 900, "/workspace/ckpt-900", False)
    [found] = alerts.conditions(
        alerts.CampaignFacts(now=T0, currency="USD", lots=(lot,), latest_checkpoint=on_disk)
    )
    assert found.kind == "checkpoint_not_retrieved"
    assert "step 900, at /workspace/ckpt-900" in found.message
    copied = alerts.LatestCheckpoint("checkpoint:9", "r-1", 900, "s3://b/ckpt-900", True)
    assert not alerts.conditions(
        alerts.CampaignFacts(now=T0, currency="USD", lots=(lot,), latest_checkpoint=copied)
    )


def test_budget_alerts_at_80_then_100_percent() -> None:
    def kinds(spent: str) -> list[str]:
        facts = alerts.CampaignFacts(
            now=T0, currency="USD", spent=Decimal(spent), budget=Decimal("100")
        )
        return [c.key for c in alerts.conditions(facts)]

    assert kinds("79.99") == []
    assert kinds("80.00") == ["budget:80"]
    assert kinds("100.00") == ["budget:80", "budget:100"]


def test_negative_slack_and_a_silent_run_alert() -> None:
    activity = alerts.RunActivity("r-1", 11, T0, T0 + timedelta(minutes=10))  # every minute
    facts = alerts.CampaignFacts(
        now=T0 + timedelta(minutes=25),
        currency="USD",
        running_runs=("r-1",),
        over_hours=6.5,
        activity=(activity,),
    )
    found = {c.kind: c for c in alerts.conditions(facts)}
    assert "6.5 h past the window" in found["calendar_slack"].message
    assert "logged nothing for 0.3 h" in found["run_silent"].message
    # Ten minutes is the floor: a loop logging every minute is not silent after five.
    quiet = alerts.CampaignFacts(
        now=T0 + timedelta(minutes=15), currency="USD", running_runs=("r-1",), activity=(activity,)
    )
    assert alerts.conditions(quiet) == []


# --- Stored once, listed, emailed ---------------------------------------------------------------


@pytest.mark.postgres
@override_settings(EMAIL_BACKEND="django.core.mail.backends.locmem.EmailBackend")
class AlertScanTests(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = create_team(name="nlp")  # with its default channel: e-mail to its owners
        cls.owner = make_user("olga", team=cls.team, role="owner", email="olga@example.org")
        make_user("nomail", team=cls.team, role="owner")
        cls.planner = make_user("pia", team=cls.team, email="pia@example.org")
        cls.outsider = make_user("otto", team=Team.objects.create(name="vision"))
        cls.campaign = committed_campaign(cls.team)  # one 72 h lot from the commit

    def near_the_end(self) -> datetime:
        return self.campaign.committed_at + timedelta(hours=66)

    def test_each_alert_is_stored_once_and_resolved_when_its_condition_ends(self) -> None:
        loop = ingest_client(self.campaign)
        loop.post(f"/api/v1/campaigns/{self.campaign.pk}/runs/", {"run_id": "r-1"}, format="json")
        loop.post(
            "/api/v1/runs/r-1/checkpoints/",
            {
                "step": 100,
                "components": ["model", "optimizer", "progress"],
                "resume_verified": True,
                "location": "/workspace/ckpt-100",
            },
            format="json",
        )
        with celery_eager():
            first = scan_alerts(campaign=self.campaign, now=self.near_the_end())
            again = scan_alerts(campaign=self.campaign, now=self.near_the_end())
        self.assertEqual(sorted(a.kind for a in first), ["checkpoint_not_retrieved", "lot_ending"])
        self.assertEqual(again, [])
        self.assertEqual(Alert.objects.filter(campaign=self.campaign).count(), 2)

        Checkpoint.objects.filter(run__run_id="r-1").update(retrieved=True)
        Run.objects.filter(run_id="r-1").update(status="completed", finished_at=timezone.now())
        with celery_eager():
            self.assertEqual(scan_alerts(campaign=self.campaign, now=self.near_the_end()), [])
        self.assertFalse(Alert.objects.filter(campaign=self.campaign, resolved_at=None).exists())

        body = as_user(self.planner).get(f"/api/v1/campaigns/{self.campaign.pk}/alerts/")
        self.assertEqual(body.status_code, 200)
        listed = body.json()["results"] if "results" in body.json() else body.json()
        self.assertEqual(len(listed), 2)
        self.assertTrue(all(a["resolved_at"] for a in listed))
        self.assertEqual(
            as_user(self.outsider).get(f"/api/v1/campaigns/{self.campaign.pk}/alerts/").status_code,
            404,
        )

    def test_marking_a_checkpoint_retrieved_resolves_its_alert_at_the_next_scan(self) -> None:
        loop = ingest_client(self.campaign)
        loop.post(f"/api/v1/campaigns/{self.campaign.pk}/runs/", {"run_id": "r-2"}, format="json")
        posted = loop.post(
            "/api/v1/runs/r-2/checkpoints/",
            {
                "step": 10,
                "components": ["model", "optimizer", "progress"],
                "resume_verified": True,
                "location": "/workspace/ckpt-10",
            },
            format="json",
        ).json()
        with celery_eager():
            raised = scan_alerts(campaign=self.campaign, now=self.near_the_end())
        self.assertIn("checkpoint_not_retrieved", [a.kind for a in raised])

        url = f"/api/v1/runs/r-2/checkpoints/{posted['id']}/retrieved/"
        other = committed_campaign(self.outsider.teams.get())
        self.assertEqual(ingest_client(other).post(url).status_code, 404)
        self.assertEqual(
            loop.post("/api/v1/runs/r-2/checkpoints/999999/retrieved/").status_code, 404
        )
        answer = loop.post(url)
        self.assertEqual(answer.status_code, 200, answer.json())
        self.assertTrue(answer.json()["retrieved"])
        self.assertEqual(loop.post(url).status_code, 200)  # twice is the same

        with celery_eager():
            scan_alerts(campaign=self.campaign, now=self.near_the_end())
        self.assertFalse(
            Alert.objects.filter(
                campaign=self.campaign, kind="checkpoint_not_retrieved", resolved_at=None
            ).exists()
        )

    def test_an_alert_is_emailed_once_to_the_owners_with_an_address(self) -> None:
        self.campaign.budget = Decimal("40.00")
        self.campaign.save(update_fields=["budget"])
        with celery_eager(), self.captureOnCommitCallbacks(execute=True):
            raised = scan_alerts(campaign=self.campaign)
        self.assertEqual(sorted(a.key for a in raised), ["budget:100", "budget:80"])
        self.assertEqual(len(mail.outbox), 2)
        self.assertEqual(mail.outbox[0].to, ["olga@example.org"])
        self.assertIn("budget: spent 47.14 USD reached", mail.outbox[0].body)
        deliver_alerts.apply()  # another round sends nothing again
        self.assertEqual(len(mail.outbox), 2)


@pytest.mark.django_db
def test_create_team_takes_an_email_for_each_member() -> None:
    out = StringIO()
    call_command(
        "create_team",
        "nlp",
        "--member",
        "olga:owner:olga@example.org",
        "--member",
        "pia",
        stdout=out,
    )
    users = get_user_model().objects
    assert users.get(username="olga").email == "olga@example.org"
    assert users.get(username="pia").email == ""
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="not an email address"):
        call_command("create_team", "nlp", "--member", "x:owner:nope", stdout=out)

"""Ledger migration 0009 (issue 32 item 3) moves the old channel model into alert channel rows:
a team's webhook URL and secret become a webhook channel whose Standard Webhooks key is the old
secret's bytes, every team gets its owners' e-mail channel, the Slack/Teams rows stay, and every
outbox row is tied to its channel and team; campaigns 0020 then drops the team's columns."""

from __future__ import annotations

import hashlib
import hmac
from base64 import b64encode
from datetime import UTC, datetime

from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from standardwebhooks.webhooks import Webhook

from campaigns.tests.test_metric_store_migration import MigrationTestCase

BEFORE = [
    ("ledger", "0012_i33_report_share"),
    ("campaigns", "0024_i34_late_data"),
]
AFTER = [
    ("ledger", "0013_i32b_one_alert_pipeline"),
    ("campaigns", "0025_i32b_team_webhook_moved_to_alert_channels"),
]


class OldChannelsMigrate(MigrationTestCase):
    def test_every_old_destination_becomes_a_channel_and_every_row_follows(self) -> None:
        executor = MigrationExecutor(connection)
        executor.migrate(BEFORE)
        old = executor.loader.project_state(BEFORE).apps
        Team = old.get_model("campaigns", "Team")
        Campaign = old.get_model("campaigns", "Campaign")
        hooked = Team.objects.create(name="hooked", webhook_url="https://hooks.example.org/a",
                                     webhook_secret="old-s3cret")  # fmt: skip
        quiet = Team.objects.create(name="quiet")
        old.get_model("ledger", "AlertChannel").objects.create(
            team=quiet, kind="slack", url="https://hooks.slack.com/services/T/B/x"
        )
        campaign = Campaign.objects.create(
            team=hooked, title="t", question="q", corpus_name="c", corpus_revision="r",
            window_hours=72, currency="USD",
        )  # fmt: skip
        alert = old.get_model("ledger", "Alert").objects.create(
            campaign=campaign, kind="budget", key="budget:80", message="m"
        )
        Delivery = old.get_model("ledger", "AlertDelivery")
        Delivery.objects.create(alert=alert, channel="email", state="sent")
        Delivery.objects.create(alert=alert, channel="webhook", state="failed", attempts=2)

        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(AFTER)
        new = executor.loader.project_state(AFTER).apps
        Channel = new.get_model("ledger", "AlertChannel")
        channels = {(c.team.name, c.kind): c for c in Channel.objects.select_related("team")}
        assert set(channels) == {
            ("hooked", "email"), ("hooked", "webhook"), ("quiet", "email"), ("quiet", "slack")
        }  # fmt: skip
        hook = channels[("hooked", "webhook")]
        assert hook.target == "https://hooks.example.org/a"
        assert all(c.muted_kinds == ["run_finished"] for c in channels.values())
        # The receiver keeps its secret: the key is its bytes.
        now, body = datetime(2026, 12, 3, tzinfo=UTC), '{"a": 1}'
        expected = hmac.new(b"old-s3cret", f"msg_1.{int(now.timestamp())}.{body}".encode(),
                            hashlib.sha256).digest()  # fmt: skip
        assert Webhook(hook.secret).sign("msg_1", now, body) == "v1," + b64encode(expected).decode()
        rows = {
            d.kind: (d.channel_id, d.team_id, d.state, d.attempts)
            for d in new.get_model("ledger", "AlertDelivery").objects.all()
        }
        assert rows == {
            "email": (channels[("hooked", "email")].pk, hooked.pk, "sent", 0),
            "webhook": (hook.pk, hooked.pk, "failed", 2),
        }
        team_columns = [c.name for c in connection.introspection.get_table_description(
            connection.cursor(), "campaigns_team")]  # fmt: skip
        assert "webhook_url" not in team_columns and "webhook_secret" not in team_columns

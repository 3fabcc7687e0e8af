"""One alert pipeline (issue 32 item 3, docs/domain.md §19.4): every destination is an alert
channel row. Each team gets an e-mail channel to its owners (what every alert did before) and,
when it had one, a webhook channel with the team's webhook URL and its secret (as Standard
Webhooks' key: `whsec_` + base64 of the old secret's bytes, so a receiver keeps its secret);
each outbox row is tied to its channel and team. Alert kinds lose their choices (their words
are in ledger/domain/alerts.py: a new kind needs no migration). The team's webhook columns are
dropped after this, by campaigns 0020."""

import base64

import django.db.models.deletion
from django.db import migrations, models

import campaigns.models.sealed
import catalog.validators

KINDS = [
    ("email", "E-mail"),
    ("webhook", "Webhook (JSON, Standard Webhooks signature)"),
    ("slack", "Slack (incoming webhook)"),
    ("teams", "Microsoft Teams (Workflows webhook)"),
]
MUTED = ["run_finished"]


def whsec(secret: str) -> str:
    return "whsec_" + base64.b64encode(secret.encode()).decode() if secret else ""


def to_channels(apps, schema_editor):
    Team = apps.get_model("campaigns", "Team")
    Channel = apps.get_model("ledger", "AlertChannel")
    Delivery = apps.get_model("ledger", "AlertDelivery")
    Channel.objects.update(muted_kinds=MUTED)  # the chat channels already there
    for team in Team.objects.order_by("id"):
        email = Channel.objects.create(team=team, kind="email", name="Owners", muted_kinds=MUTED)
        hook = None
        if team.webhook_url:
            hook = Channel.objects.create(
                team=team,
                kind="webhook",
                name="Webhook",
                target=team.webhook_url,
                secret=whsec(team.webhook_secret),
                muted_kinds=MUTED,
            )
        mine = Delivery.objects.filter(alert__campaign__team_id=team.pk)
        mine.filter(kind="email").update(channel=email, team=team)
        mine.filter(kind="webhook").update(channel=hook, team=team)
        mine.filter(team__isnull=True).update(team=team)
    if schema_editor.connection.vendor == "postgresql":
        # The rows' deferred FK checks now, so the ALTER TABLEs below find none pending.
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")


def to_team_webhooks(apps, schema_editor):
    Team = apps.get_model("campaigns", "Team")
    Channel = apps.get_model("ledger", "AlertChannel")
    for hook in Channel.objects.filter(kind="webhook").order_by("-id"):
        secret = base64.b64decode(hook.secret[len("whsec_") :] + "==").decode(errors="replace")
        Team.objects.filter(pk=hook.team_id, webhook_url="").update(
            webhook_url=hook.target[:500], webhook_secret=secret
        )
    Channel.objects.filter(kind__in=["email", "webhook"]).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("campaigns", "0024_i34_late_data"),
        ("ledger", "0012_i33_report_share"),
    ]

    operations = [
        migrations.RemoveConstraint(model_name="alertdelivery", name="one_delivery_per_channel"),
        migrations.RenameField(model_name="alertdelivery", old_name="channel", new_name="kind"),
        migrations.AlterField(
            model_name="alertdelivery",
            name="kind",
            field=models.CharField(choices=KINDS, max_length=10),
        ),
        migrations.AddField(
            model_name="alertdelivery",
            name="channel",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="deliveries",
                to="ledger.alertchannel",
            ),
        ),
        migrations.AddField(
            model_name="alertdelivery",
            name="team",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="campaigns.team",
            ),
        ),
        migrations.AddField(
            model_name="alertdelivery",
            name="last_status",
            field=models.PositiveSmallIntegerField(blank=True, null=True),
        ),
        migrations.RenameField(model_name="alertchannel", old_name="url", new_name="target"),
        migrations.AlterField(
            model_name="alertchannel",
            name="target",
            field=models.CharField(blank=True, max_length=1000),
        ),
        migrations.AddField(
            model_name="alertchannel",
            name="secret",
            field=campaigns.models.sealed.SealedTextField(blank=True),
        ),
        migrations.AddField(
            model_name="alertchannel",
            name="muted_kinds",
            field=models.JSONField(blank=True, default=list),
        ),
        migrations.AlterField(
            model_name="alertchannel",
            name="kind",
            field=models.CharField(choices=KINDS, max_length=10),
        ),
        migrations.AlterField(
            model_name="alert", name="kind", field=models.CharField(max_length=40)
        ),
        migrations.AddField(
            model_name="alert",
            name="run",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="campaigns.run",
            ),
        ),
        migrations.RunPython(to_channels, to_team_webhooks),
        migrations.AlterField(
            model_name="alertdelivery",
            name="team",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE, related_name="+", to="campaigns.team"
            ),
        ),
        migrations.AddConstraint(
            model_name="alertdelivery",
            constraint=models.UniqueConstraint(
                fields=("alert", "channel"), name="one_delivery_per_channel"
            ),
        ),
        migrations.AlterModelOptions(
            name="alertdelivery",
            options={
                "ordering": ["-next_attempt_at", "-id"],
                "verbose_name_plural": "alert deliveries",
            },
        ),
        migrations.CreateModel(
            name="MetricThreshold",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "metric",
                    models.CharField(
                        max_length=250, validators=[catalog.validators.no_bidi_controls]
                    ),
                ),
                (
                    "comparator",
                    models.CharField(
                        choices=[("lt", "<"), ("le", "≤"), ("gt", ">"), ("ge", "≥")], max_length=2
                    ),
                ),
                ("threshold", models.FloatField()),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "team",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="metric_thresholds",
                        to="campaigns.team",
                    ),
                ),
            ],
            options={"ordering": ["metric", "id"]},
        ),
    ]

"""Secrets at rest (docs/domain.md §26): team webhook secrets sealed (encrypted under a key
derived from SECRET_KEY), and users' API tokens kept as digests in their own table.

Nothing is lost: every stored webhook secret is sealed in place (and read back the same), and
every DRF token (rest_framework.authtoken, no longer installed) is copied as its digest, so the
keys users already hold keep working, then deleted from DRF's table, which held them in clear.
Stored answers of earlier key issues (Idempotency-Key replays, kept 168 h) lose the key itself:
they answer its id and prefix with `key_shown_once`, as new ones do.
Backwards, the secrets are written back in clear; the tokens stay digests (a digest cannot give
the key back: users issue new ones with `manage.py issue_api_token`).
"""

import hashlib
import json

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

import campaigns.models.sealed


def seal_webhook_secrets(apps, schema_editor):
    Team = apps.get_model("campaigns", "Team")
    # Reading gives the clear text (an unsealed value reads as it is); writing seals it.
    for pk, secret in Team.objects.values_list("pk", "webhook_secret"):
        if secret:
            Team.objects.filter(pk=pk).update(webhook_secret=secret)


def unseal_webhook_secrets(apps, schema_editor):
    Team = apps.get_model("campaigns", "Team")
    with schema_editor.connection.cursor() as cursor:
        for pk, secret in Team.objects.values_list("pk", "webhook_secret"):
            cursor.execute(
                "UPDATE campaigns_team SET webhook_secret = %s WHERE id = %s", [secret, pk]
            )


def copy_drf_tokens(apps, schema_editor):
    connection = schema_editor.connection
    if "authtoken_token" not in connection.introspection.table_names():
        return  # a database created after DRF's token app left INSTALLED_APPS
    ApiToken = apps.get_model("campaigns", "ApiToken")
    with connection.cursor() as cursor:
        cursor.execute("SELECT key, user_id FROM authtoken_token")
        for key, user_id in cursor.fetchall():
            ApiToken.objects.create(
                user_id=user_id,
                name="DRF token",
                prefix=key[:12],
                digest=hashlib.sha256(key.encode()).hexdigest(),
            )
        cursor.execute("DELETE FROM authtoken_token")


def scrub_stored_keys(apps, schema_editor):
    IdempotencyRecord = apps.get_model("campaigns", "IdempotencyRecord")
    issued = IdempotencyRecord.objects.filter(path__endswith="/ingest-keys/", status_code=201)
    for record in issued:
        try:
            body = json.loads(bytes(record.response_body or b""))
        except ValueError:
            continue
        if isinstance(body, dict) and body.get("key"):
            body.update(key=None, key_shown_once=True)
            record.response_body = json.dumps(body).encode()
            record.save(update_fields=["response_body"])


class Migration(migrations.Migration):
    dependencies = [
        ("campaigns", "0013_h18num_stage_observed_reason"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name="team",
            name="webhook_secret",
            field=campaigns.models.sealed.SealedTextField(
                blank=True,
                help_text="Signs each alert: X-Desk-Signature: sha256=<hex HMAC-SHA256 of the body>.",
            ),
        ),
        migrations.CreateModel(
            name="ApiToken",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("name", models.CharField(blank=True, max_length=100)),
                ("prefix", models.CharField(editable=False, max_length=12)),
                ("digest", models.CharField(editable=False, max_length=64, unique=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="api_tokens",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
        ),
        migrations.RunPython(seal_webhook_secrets, unseal_webhook_secrets),
        migrations.RunPython(copy_drf_tokens, migrations.RunPython.noop),
        migrations.RunPython(scrub_stored_keys, migrations.RunPython.noop),
    ]

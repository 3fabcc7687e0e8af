"""Secrets at rest (issue 19, Low; docs/domain.md §26): a team's webhook secret is stored
sealed (encrypted under a key derived from SECRET_KEY) and read back in clear to sign; users'
API tokens are stored as digests only. The migration seals what was stored in clear and keeps
DRF's existing tokens working as digests."""

from __future__ import annotations

import importlib
from io import StringIO
from types import SimpleNamespace

from django.apps import apps
from django.core.management import call_command
from django.db import connection
from django.test import TestCase, override_settings

from campaigns.models import ApiToken, Team
from campaigns.models.sealed import PREFIX
from campaigns.services import set_team_webhook
from campaigns.tests.factories import as_user, make_user
from ledger.alert_delivery import signature

migration = importlib.import_module(
    "campaigns.migrations.0014_h19keys_sealed_secrets_hashed_tokens"
)


def _stored(table: str, column: str, pk: int) -> str:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {column} FROM {table} WHERE id = %s", [pk])
        return str(cursor.fetchone()[0])


class AWebhookSecretIsSealed(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        set_team_webhook(
            team=cls.team, webhook_url="https://hooks.example.com/x", webhook_secret="s3cret-value"
        )

    def test_the_database_holds_no_clear_secret_and_the_signature_is_unchanged(self) -> None:
        stored = _stored("campaigns_team", "webhook_secret", self.team.pk)
        self.assertTrue(stored.startswith(PREFIX))
        self.assertNotIn("s3cret-value", stored)
        team = Team.objects.get(pk=self.team.pk)
        self.assertEqual(team.webhook_secret, "s3cret-value")
        self.assertEqual(signature(team.webhook_secret, b"{}"), signature("s3cret-value", b"{}"))

    def test_a_rotated_secret_key_still_opens_it_through_the_fallbacks(self) -> None:
        from django.conf import settings

        old = settings.SECRET_KEY
        with override_settings(SECRET_KEY="a-new-key-" + "x" * 50, SECRET_KEY_FALLBACKS=[old]):
            self.assertEqual(Team.objects.get(pk=self.team.pk).webhook_secret, "s3cret-value")
        with override_settings(SECRET_KEY="a-new-key-" + "x" * 50, SECRET_KEY_FALLBACKS=[]):
            # No key opens it: read as unset, so delivery refuses to send unsigned.
            self.assertEqual(Team.objects.get(pk=self.team.pk).webhook_secret, "")

    def test_the_migration_seals_a_secret_stored_in_clear_and_loses_nothing(self) -> None:
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE campaigns_team SET webhook_secret = 'legacy' WHERE id = %s", [self.team.pk]
            )
        self.assertEqual(Team.objects.get(pk=self.team.pk).webhook_secret, "legacy")
        migration.seal_webhook_secrets(apps, SimpleNamespace(connection=connection))
        self.assertTrue(
            _stored("campaigns_team", "webhook_secret", self.team.pk).startswith(PREFIX)
        )
        self.assertEqual(Team.objects.get(pk=self.team.pk).webhook_secret, "legacy")


class AnApiTokenIsKeptAsADigest(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.olga = make_user("olga", team=cls.team, role="owner")

    def test_the_command_prints_a_token_that_works_and_is_stored_nowhere(self) -> None:
        out = StringIO()
        call_command("issue_api_token", "olga", stdout=out)
        raw = out.getvalue().strip()
        token = ApiToken.objects.get(user=self.olga)
        self.assertEqual(token.digest, ApiToken.hash(raw))
        self.assertNotIn(raw, str(ApiToken.objects.filter(pk=token.pk).values().get()))
        answer = self.client.get("/api/v1/campaigns/", HTTP_AUTHORIZATION=f"Token {raw}")
        self.assertEqual(answer.status_code, 200)
        wrong = self.client.get("/api/v1/campaigns/", HTTP_AUTHORIZATION=f"Token {raw}x")
        self.assertEqual(wrong.status_code, 401)

    def test_drf_tokens_in_clear_become_digests_that_keep_working(self) -> None:
        with connection.cursor() as cursor:
            cursor.execute(
                "CREATE TABLE authtoken_token (key varchar(40) PRIMARY KEY, created timestamp with "
                "time zone, user_id integer)"
                if connection.vendor == "postgresql"
                else "CREATE TABLE authtoken_token (key varchar(40) PRIMARY KEY, created datetime, "
                "user_id integer)"
            )
            cursor.execute(
                "INSERT INTO authtoken_token (key, user_id) VALUES (%s, %s)",
                ["0123456789abcdef0123456789abcdef01234567", self.olga.pk],
            )
        migration.copy_drf_tokens(apps, SimpleNamespace(connection=connection))
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM authtoken_token")
            self.assertEqual(cursor.fetchone()[0], 0)
        answer = self.client.get(
            "/api/v1/campaigns/",
            HTTP_AUTHORIZATION="Token 0123456789abcdef0123456789abcdef01234567",
        )
        self.assertEqual(answer.status_code, 200)

    def test_a_user_may_hold_several_tokens(self) -> None:
        first, second = as_user(self.olga), as_user(self.olga)
        self.assertEqual(first.get("/api/v1/campaigns/").status_code, 200)
        self.assertEqual(second.get("/api/v1/campaigns/").status_code, 200)
        self.assertEqual(ApiToken.objects.filter(user=self.olga).count(), 2)

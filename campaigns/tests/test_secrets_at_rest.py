"""Secrets at rest (issue 19, Low; docs/domain.md §26): users' API tokens are stored as digests
only, and the migration keeps DRF's existing tokens working as digests. (A webhook's signing
secret is sealed: ledger/tests/test_alert_channels.py.)"""

from __future__ import annotations

import importlib
from io import StringIO
from types import SimpleNamespace

from django.apps import apps
from django.core.management import call_command
from django.db import connection
from django.test import TestCase

from campaigns.models import ApiToken, Team
from campaigns.tests.factories import as_user, make_user

migration = importlib.import_module(
    "campaigns.migrations.0014_h19keys_sealed_secrets_hashed_tokens"
)


def _stored(table: str, column: str, pk: int) -> str:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {column} FROM {table} WHERE id = %s", [pk])
        return str(cursor.fetchone()[0])


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

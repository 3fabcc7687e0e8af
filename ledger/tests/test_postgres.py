"""Append-only at the database level: PostgreSQL itself refuses to rewrite the ledger."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.db import DatabaseError, connection, transaction
from django.test import TestCase

from campaigns.models import Team
from campaigns.tests.factories import committed_campaign
from ledger.models import LedgerEntry


@pytest.mark.postgres
class DatabaseLevelAppendOnlyTests(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.campaign = committed_campaign(Team.objects.create(name="db"))
        cls.entry = LedgerEntry.objects.get(campaign=cls.campaign)

    def test_postgres_refuses_an_update_that_bypasses_the_model(self) -> None:
        self.assertEqual(connection.vendor, "postgresql")
        with self.assertRaises(DatabaseError) as refused, transaction.atomic():
            LedgerEntry.objects.filter(pk=self.entry.pk).update(amount=Decimal("0.01"))
        self.assertIn("Cannot update or delete", str(refused.exception))
        self.assertEqual(LedgerEntry.objects.get(pk=self.entry.pk).amount, Decimal("47.14"))

    def test_postgres_refuses_a_queryset_delete_and_raw_sql(self) -> None:
        with self.assertRaises(DatabaseError), transaction.atomic():
            LedgerEntry.objects.filter(pk=self.entry.pk).delete()
        for sql in (
            "UPDATE ledger_ledgerentry SET description = 'edited' WHERE id = %s",
            "DELETE FROM ledger_ledgerentry WHERE id = %s",
        ):
            with (
                self.subTest(sql=sql),
                self.assertRaises(DatabaseError),
                transaction.atomic(),
                connection.cursor() as cursor,
            ):
                cursor.execute(sql, [self.entry.pk])
        self.assertEqual(
            LedgerEntry.objects.get(pk=self.entry.pk).description, self.entry.description
        )

    def test_postgres_still_accepts_new_entries_and_reversals(self) -> None:
        from ledger.services import reverse_entry

        reversal = reverse_entry(campaign=self.campaign, entry_id=self.entry.pk)
        self.assertEqual(reversal.amount, Decimal("-47.14"))
        self.assertEqual(LedgerEntry.objects.filter(campaign=self.campaign).count(), 2)

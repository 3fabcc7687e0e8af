"""Append-only whatever the session does: no variable, no TRUNCATE, no owner gets past it.

Raw SQL through the test connection, which is the tables' owner and a superuser: the strongest
role the application could hold (docker-compose gives it far less, see deploy/).
"""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection, transaction
from django.test import TestCase

from campaigns.models import PlanBaseline, Team
from campaigns.tests.factories import committed_campaign
from ledger.models import LedgerEntry

# What django-pgtrigger's Protect triggers obey; a session may set it to whatever it likes.
IGNORE_ALL = (
    "SET LOCAL pgtrigger.ignore = "
    "'{ledger_ledgerentry:pgtrigger_ledger_append_only_329af,"
    "campaigns_planbaseline:pgtrigger_baseline_never_rewritten_0b302}'"
)
SESSION_TRICKS = {
    "plain": [],
    "pgtrigger.ignore": [IGNORE_ALL],
    "replica role": [IGNORE_ALL, "SET LOCAL session_replication_role = replica"],
}


@pytest.mark.postgres
class AppendOnlyWhateverTheSessionDoes(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.campaign = committed_campaign(Team.objects.create(name="tamper"))
        cls.entry = LedgerEntry.objects.get(campaign=cls.campaign)
        cls.baseline = PlanBaseline.objects.get(campaign=cls.campaign)

    def refused(self, setup: list[str], sql: str, params: list[object]) -> str:
        with (
            self.assertRaises(DatabaseError) as caught,
            transaction.atomic(),
            connection.cursor() as cursor,
        ):
            # Fire the deferred FK checks of the test's own inserts first: PostgreSQL refuses
            # a TRUNCATE with pending trigger events for a reason of its own.
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            for statement in setup:
                cursor.execute(statement)
            cursor.execute(sql, params)
        return str(caught.exception)

    def test_the_session_runs_as_the_tables_owner_and_a_superuser(self) -> None:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_get_userbyid(relowner) = current_user, "
                "(SELECT rolsuper FROM pg_roles WHERE rolname = current_user) "
                "FROM pg_class WHERE relname = 'ledger_ledgerentry'"
            )
            self.assertEqual(cursor.fetchone(), (True, True))

    def test_it_refuses_to_update_delete_or_truncate_the_ledger_whatever_the_session_sets(
        self,
    ) -> None:
        pk = self.entry.pk
        for trick, setup in SESSION_TRICKS.items():
            with self.subTest(trick=trick):
                message = self.refused(
                    setup, "UPDATE ledger_ledgerentry SET amount = 0 WHERE id = %s", [pk]
                )
                self.assertIn("Cannot update or delete", message)
                self.refused(setup, "DELETE FROM ledger_ledgerentry WHERE id = %s", [pk])
                message = self.refused(setup, "TRUNCATE ledger_ledgerentry CASCADE", [])
                self.assertIn("Cannot truncate ledger_ledgerentry", message)
        entry = LedgerEntry.objects.get(pk=pk)
        self.assertEqual(
            (entry.amount, entry.description), (self.entry.amount, self.entry.description)
        )

    def test_it_refuses_to_rewrite_or_truncate_the_committed_baseline(self) -> None:
        pk = self.baseline.pk
        for trick, setup in SESSION_TRICKS.items():
            with self.subTest(trick=trick):
                self.refused(
                    setup,
                    "UPDATE campaigns_planbaseline SET snapshot = '{}'::jsonb WHERE id = %s",
                    [pk],
                )
                self.refused(setup, "DELETE FROM campaigns_planbaseline WHERE id = %s", [pk])
                message = self.refused(setup, "TRUNCATE campaigns_planbaseline CASCADE", [])
                self.assertIn("Cannot truncate campaigns_planbaseline", message)
        self.assertEqual(PlanBaseline.objects.get(pk=pk).snapshot, self.baseline.snapshot)

    def test_truncating_a_table_the_ledger_references_is_refused_too(self) -> None:
        self.refused([IGNORE_ALL], "TRUNCATE campaigns_campaign CASCADE", [])
        self.assertTrue(LedgerEntry.objects.filter(pk=self.entry.pk).exists())

    def test_appending_still_works(self) -> None:
        from ledger.services import reverse_entry

        reverse_entry(campaign=self.campaign, entry_id=self.entry.pk)
        self.assertEqual(LedgerEntry.objects.filter(campaign=self.campaign).count(), 2)

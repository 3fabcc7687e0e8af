"""Append-only, enforced by PostgreSQL whatever the session does.

django-pgtrigger's Protect triggers (0001 here, campaigns 0002) cover UPDATE and DELETE but not
TRUNCATE, and they step aside when a session sets `pgtrigger.ignore`. These plain triggers
consult no session variable, cover TRUNCATE, fire for the table's owner and superusers alike,
and are ENABLE ALWAYS so that `session_replication_role = replica` does not silence them either.
Only DDL by the tables' owner (dropping or disabling the trigger) gets past them; in
docker-compose the application connects as a role that owns neither the tables nor the function
(deploy/postgres-init.sh), so the application cannot. On SQLite this migration does nothing
(the models refuse rewrites there).
"""

from django.db import migrations

FUNCTION = "campaign_desk_refuse_rewrite"
# (table, row trigger, truncate trigger); conftest.py names the truncate triggers to let the
# test harness flush the test database.
TABLES = [
    ("ledger_ledgerentry", "ledger_entry_append_only", "ledger_entry_no_truncate"),
    ("campaigns_planbaseline", "plan_baseline_append_only", "plan_baseline_no_truncate"),
]

CREATE_FUNCTION = f"""
CREATE OR REPLACE FUNCTION {FUNCTION}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        RAISE EXCEPTION 'Cannot truncate % (append-only)', TG_TABLE_NAME
            USING ERRCODE = 'restrict_violation';
    END IF;
    RAISE EXCEPTION 'Cannot update or delete rows of % (append-only): % refused',
        TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'restrict_violation';
END;
$$;
"""


def forward_sql() -> list[str]:
    statements = [CREATE_FUNCTION]
    for table, row_trigger, truncate_trigger in TABLES:
        statements += [
            f"CREATE TRIGGER {row_trigger} BEFORE UPDATE OR DELETE ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION {FUNCTION}();",
            f"CREATE TRIGGER {truncate_trigger} BEFORE TRUNCATE ON {table} "
            f"FOR EACH STATEMENT EXECUTE FUNCTION {FUNCTION}();",
            f"ALTER TABLE {table} ENABLE ALWAYS TRIGGER {row_trigger};",
            f"ALTER TABLE {table} ENABLE ALWAYS TRIGGER {truncate_trigger};",
        ]
    return statements


def reverse_sql() -> list[str]:
    statements = []
    for table, row_trigger, truncate_trigger in TABLES:
        statements += [
            f"DROP TRIGGER IF EXISTS {row_trigger} ON {table};",
            f"DROP TRIGGER IF EXISTS {truncate_trigger} ON {table};",
        ]
    return [*statements, f"DROP FUNCTION IF EXISTS {FUNCTION}();"]


def apply(apps, schema_editor):  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor != "postgresql":
        return
    for statement in forward_sql():
        schema_editor.execute(statement, params=None)


def unapply(apps, schema_editor):  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor != "postgresql":
        return
    for statement in reverse_sql():
        schema_editor.execute(statement, params=None)


class Migration(migrations.Migration):
    dependencies = [
        ("campaigns", "0002_initial"),
        ("ledger", "0002_deliverable_submitter_report_start"),
    ]

    operations = [migrations.RunPython(apply, unapply)]

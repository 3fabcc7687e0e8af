"""The parallel workers' databases are copies of one migrated template
(tests/template_database.py)."""

from __future__ import annotations

import re

import pytest
from django.db import connection

from conftest import XDIST_WORKER
from tests import template_database


def test_the_template_is_named_for_the_test_database_and_the_code_that_builds_it() -> None:
    name = template_database.template_name("test_cd_ci_gw1", "gw1")
    assert re.fullmatch(r"test_cd_ci_tpl_[0-9a-f]{12}", name), name
    assert name == template_database.template_name("test_cd_ci_gw0", "gw0")


def test_the_digest_changes_with_any_file_its_name_or_django_and_not_with_their_order() -> None:
    files = {"campaigns/models/plan.py": b"x = 1\n", "campaigns/migrations/0001.py": b"ops\n"}
    digest = template_database.digest_of("5.2.19", files)
    assert re.fullmatch(r"[0-9a-f]{12}", digest)
    assert template_database.digest_of("5.2.19", dict(reversed(files.items()))) == digest
    changed = [
        template_database.digest_of("5.2.20", files),
        template_database.digest_of("5.2.19", {**files, "campaigns/models/plan.py": b"x = 2\n"}),
        template_database.digest_of("5.2.19", {**files, "ledger/models.py": b""}),
        template_database.digest_of(
            "5.2.19",
            {"campaigns/models/other.py": b"x = 1\n", "campaigns/migrations/0001.py": b"ops\n"},
        ),
    ]
    assert digest not in changed and len(set(changed)) == len(changed)


@pytest.mark.postgres
@pytest.mark.django_db
def test_this_workers_database_was_copied_from_the_current_template() -> None:
    if not XDIST_WORKER:
        pytest.skip("a run without xdist workers migrates its one database as pytest-django does")
    name = connection.settings_dict["NAME"]
    assert name.endswith(f"_{XDIST_WORKER}")
    template = template_database.template_name(name, XDIST_WORKER)
    with connection._nodb_cursor() as server:
        server.execute("SELECT datname FROM pg_database WHERE datname = %s", [template])
        assert server.fetchone() == (template,)
    from django.db.migrations.recorder import MigrationRecorder

    assert MigrationRecorder.Migration.objects.filter(app="campaigns").exists()


@pytest.mark.postgres
@pytest.mark.django_db
def test_templates_of_other_digests_are_dropped_and_only_those() -> None:
    base = "cd_tpltest_" + (XDIST_WORKER or "serial")
    current = f"{base}_tpl_aaaaaaaaaaaa"
    names = [f"{base}_tpl_bbbbbbbbbbbb", current, f"{current}_building", f"{base}x_tpl_c", base]
    quote = connection.ops.quote_name
    with connection._nodb_cursor() as server:
        for name in names:
            server.execute(f"DROP DATABASE IF EXISTS {quote(name)}")
            server.execute(f"CREATE DATABASE {quote(name)}")
        try:
            dropped = template_database.drop_other_templates(server, current, quote)
            server.execute("SELECT datname FROM pg_database WHERE datname = ANY(%s)", [names])
            left = sorted(name for (name,) in server.fetchall())
        finally:
            for name in names:
                server.execute(f"DROP DATABASE IF EXISTS {quote(name)}")
    assert dropped == [f"{base}_tpl_bbbbbbbbbbbb"]
    assert left == sorted(names[1:])

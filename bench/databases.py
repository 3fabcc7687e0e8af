"""Throwaway PostgreSQL databases for the benchmarks (loopback only)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

# A migrated database to copy instead of creating an empty one (CREATE DATABASE ... TEMPLATE):
# the benchmark's own `migrate` then finds nothing to apply. The smoke test
# (tests/test_benchmarks_smoke.py) sets it so its ten tiny runs share one migration; a
# benchmark run for figures leaves it unset.
TEMPLATE_ENV = "BENCH_TEMPLATE_DB"


def db_url(admin_url: str, name: str) -> str:
    return admin_url.rsplit("/", 1)[0] + "/" + name


def drop_database(admin_url: str, name: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


def recreate_database(admin_url: str, name: str, *, schema: bool = True) -> None:
    """Drop and create `name`; a copy of $BENCH_TEMPLATE_DB when set and `schema` (the database
    is for Campaign Desk's tables: MLflow's own store passes schema=False)."""
    import psycopg
    from psycopg import sql

    drop_database(admin_url, name)
    template = os.environ.get(TEMPLATE_ENV) if schema else None
    create = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
    if template:
        create = sql.SQL("{} TEMPLATE {}").format(create, sql.Identifier(template))
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(create)


def backend_pids(admin_url: str, name: str) -> list[int]:
    """The PostgreSQL backends connected to database `name` (a server's threads', for the CPU
    they spend: bench/cpu.py)."""
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as conn:
        rows = conn.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s", (name,))
        return [int(r[0]) for r in rows]


def server_admin_url(settings_dict: dict[str, Any]) -> str:
    """The URL of the `postgres` database on the server of a Django database's settings."""
    user = settings_dict.get("USER") or "postgres"
    auth = f"{user}:{settings_dict['PASSWORD']}" if settings_dict.get("PASSWORD") else user
    host = settings_dict.get("HOST") or "127.0.0.1"
    return f"postgres://{auth}@{host}:{settings_dict.get('PORT') or 5432}/postgres"


@contextlib.contextmanager
def throwaway_test_database(connection: Any) -> Iterator[None]:
    """The throwaway test database of a benchmark that builds its own data (bench/estimates):
    Django's `create_test_db` (SQLite in memory, or `test_<name>` on DATABASE_URL's server,
    every migration run), or on PostgreSQL with $BENCH_TEMPLATE_DB set, `test_<name>` copied
    from that migrated database (no migration to run: the smoke test's path, where the two
    scripts took 23 s and 37 s on SQLite in a loaded suite run, and 6 s and 4 s copied, run
    alone). Dropped on the way out either way."""
    old_name = connection.settings_dict["NAME"]
    template = os.environ.get(TEMPLATE_ENV)
    if not (template and connection.vendor == "postgresql"):
        connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
        try:
            yield
        finally:
            connection.creation.destroy_test_db(old_name, verbosity=0)
        return
    from django.conf import settings

    name = connection.creation._get_test_db_name()
    admin = server_admin_url(connection.settings_dict)
    recreate_database(admin, name)
    connection.close()
    settings.DATABASES[connection.alias]["NAME"] = connection.settings_dict["NAME"] = name
    try:
        yield
    finally:
        connection.close()
        settings.DATABASES[connection.alias]["NAME"] = connection.settings_dict["NAME"] = old_name
        drop_database(admin, name)

"""Throwaway PostgreSQL databases for the benchmarks (loopback only)."""

from __future__ import annotations

import os

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

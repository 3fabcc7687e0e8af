"""Every benchmark still starts and finishes: each `bench/` script runs at a tiny size (issue 21
item 5). It measures nothing; a script that no longer runs against the current schema fails
here instead of on the day someone needs its figures. Each script makes its own throwaway
database next to the test database's server and drops it; that database is a copy of one this
module migrates once (BENCH_TEMPLATE_DB, bench/databases.py), or the test workers' own migrated
template when there is one (tests/template_database.py), so the ten scripts' own `migrate`
finds the schema current instead of each running every migration (the module's CPU time, its
subprocesses' included, 82 s before and 59 s after on 2026-12-01, load average 6-8)."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from django.db import connection
from django.test import SimpleTestCase

from bench.databases import db_url, server_admin_url

ROOT = Path(__file__).resolve().parent.parent
POSTGRES = connection.vendor == "postgresql"

# Script, then its arguments at a tiny size (OUT: a file in a temporary directory).
TINY = {
    "campaign_page": ["--items", "5", "--small", "2", "--repeat", "1", "--output", "OUT"],
    "campaign_page/posts": ["--repeat", "1"],
    "estimates": ["--repeat", "1", "--items", "20", "--campaign-items", "10", "--output", "OUT"],
    "estimates/hardware_options": ["--items", "10", "--repeat", "1"],
    "exports": ["--smoke", "--output", "OUT"],
    "ingest": [
        *("--workers", "1", "--clients", "1", "--seconds", "2", "--max-requests", "3"),
        *("--warmup", "1", "--copy-batches", "3", "--output", "OUT"),
        *("--prefill", "20000", "--prefill-runs", "3"),  # and again at a (small) full table
    ],
    "mlflow": ["--steps", "10", "--batches", "2", "--rounds", "1", "--workers", "1"],
    "money": ["--campaigns", "2", "--runs", "2", "--repeat", "1", "--output", "OUT"],
    "portfolio": ["--campaigns", "3", "--entries", "2", "--repeat", "1", "--output", "OUT"],
    "report": [
        *("--items", "20", "--runs", "10", "--points", "2000", "--small-factor", "2"),
        *("--repeat", "1", "--output", "OUT"),
    ],
    "runs": ["--points", "3000", "--repeat", "1"],
    "slow_clients": [
        *("--slow-headers", "3", "--slow-uploads", "2", "--seconds", "1", "--trickle", "0.5"),
        *("--output", "OUT"),
    ],
    "timeline": ["--items", "10", "--repeat", "1", "--output", "OUT"],
    "runs_table": ["--runs", "40", "--metrics", "3", "--repeat", "1", "--output", "OUT"],
    "scale": [
        *("--points", "20000", "--runs", "5", "--sample", "2", "--repeat", "1"),
        *("--pack-while-loading", "--pack"),
    ],
}


# Scripts that build their own throwaway test database (bench.databases.throwaway_test_database):
# no --admin-url or --db to give them. Here on PostgreSQL they are given a DATABASE_URL and copy
# their `test_<name>` from the template (23 s and 37 s on SQLite in a loaded suite run; 6 s and
# 4 s copied, run alone); on SQLite they build one in memory, every migration run, as a person's
# run does.
OWN_DATABASE = {"estimates", "estimates/hardware_options"}
# Scripts that read no database at all (pure computations): run on SQLite and PostgreSQL alike.
PURE = {"timeline"}
# Started by another bench script, not by a person: bench/mlflow/run.py runs one per client.
HELPERS = {"mlflow/client"}


def bench_scripts() -> set[str]:
    """Every bench script a person runs: `<dir>` for bench/<dir>/run.py, `<dir>/<name>` for
    any other bench/<dir>/<name>.py with a __main__ block."""
    found = set()
    for path in (ROOT / "bench").glob("*/*.py"):
        if 'if __name__ == "__main__"' in path.read_text():
            found.add(
                path.parent.name if path.name == "run.py" else f"{path.parent.name}/{path.stem}"
            )
    return found - HELPERS


def script_path(name: str) -> Path:
    return ROOT / "bench" / (f"{name}.py" if "/" in name else f"{name}/run.py")


def _admin_url() -> str:
    return server_admin_url(connection.settings_dict)


def _template_name() -> str:
    return _workers_template() or f"{connection.settings_dict['NAME']}_smoke_template"


@functools.cache
def _workers_template() -> str | None:
    """The migrated template this xdist worker's test database was copied from, if it was
    (tests/template_database.py): the scripts' databases are copied from it too."""
    from conftest import XDIST_WORKER
    from tests.template_database import existing_template

    return existing_template(connection, XDIST_WORKER) if XDIST_WORKER else None


def migrate_template() -> None:
    """The database every script's own is copied from: the test workers' migrated template
    when there is one, else an empty database migrated as `migrate` does on a new
    installation (the catalog seeded by its migration)."""
    from bench.databases import recreate_database

    if _workers_template():
        return

    recreate_database(_admin_url(), _template_name(), schema=False)
    env = {**os.environ, "DATABASE_URL": db_url(_admin_url(), _template_name())}
    env.pop("CELERY_BROKER_URL", None)
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "--verbosity", "0"],
        cwd=ROOT,
        env=env,
        check=True,
        timeout=600,
    )


def own_database(name: str) -> str:
    """The database a script runs on, named after the run's own (DATABASE_URL's: a SimpleTestCase
    sees that name, not the test database's; one xdist worker runs this whole file). Short: a
    bench may prefix it with `test_`, and PostgreSQL cuts names at 63 characters."""
    return f"{connection.settings_dict['NAME']}_sm_{name.replace('/', '_')}"


def run_bench(name: str) -> subprocess.CompletedProcess[str]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / f"{name.replace('/', '_')}.json"
        args = [a.replace("OUT", str(out)) for a in TINY[name]]
        env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
        own_db = own_database(name)
        if POSTGRES:
            env["BENCH_TEMPLATE_DB"] = _template_name()
        if POSTGRES and name in OWN_DATABASE:
            env["DATABASE_URL"] = db_url(_admin_url(), own_db)  # its test_<own_db>, copied
        if name not in OWN_DATABASE | PURE:
            args += ["--admin-url", _admin_url(), "--db", own_db]
        if name == "mlflow":
            args += ["--mlflow-db", f"{connection.settings_dict['NAME']}_smoke_mlflow_store"]
        return subprocess.run(
            [sys.executable, str(script_path(name)), *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )


class EveryBenchmarkRunsAtATinySize(SimpleTestCase):
    databases = {"default"}

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        if POSTGRES:
            migrate_template()

    @classmethod
    def tearDownClass(cls) -> None:
        if POSTGRES and not _workers_template():  # the workers' template outlives the run
            from bench.databases import drop_database

            drop_database(_admin_url(), _template_name())
        super().tearDownClass()

    def assert_runs(self, name: str) -> subprocess.CompletedProcess[str]:
        done = run_bench(name)
        self.assertEqual(done.returncode, 0, f"bench/{name}/run.py:\n{done.stdout}\n{done.stderr}")
        return done

    def test_every_bench_script_is_covered(self) -> None:
        self.assertEqual(bench_scripts(), set(TINY))

    def assert_own_database_dropped(self, name: str) -> None:
        """The script's test database (on PostgreSQL a copy of the template) is gone."""
        if not POSTGRES:
            return
        from tests.template_database import database_exists

        with connection._nodb_cursor() as server:
            self.assertFalse(database_exists(server, f"test_{own_database(name)}"))

    def test_estimates(self) -> None:
        done = self.assert_runs("estimates")
        self.assertIn("PostgreSQL" if POSTGRES else "SQLite", done.stdout)
        self.assert_own_database_dropped("estimates")

    def test_timeline(self) -> None:
        done = self.assert_runs("timeline")
        self.assertIn("timeline.build", done.stdout)

    def test_estimates_hardware_options(self) -> None:
        done = self.assert_runs("estimates/hardware_options")
        self.assertIn("postgresql" if POSTGRES else "sqlite", done.stdout)
        self.assert_own_database_dropped("estimates/hardware_options")


def _postgres_bench(name: str) -> object:
    @unittest.skipUnless(POSTGRES, "the benchmark needs PostgreSQL: set DATABASE_URL")
    def test(self: EveryBenchmarkRunsAtATinySize) -> None:
        self.assert_runs(name)

    test.__name__ = f"test_{name.replace('/', '_')}"
    return test


for _name in TINY:
    if _name not in OWN_DATABASE | PURE:
        setattr(
            EveryBenchmarkRunsAtATinySize, f"test_{_name.replace('/', '_')}", _postgres_bench(_name)
        )

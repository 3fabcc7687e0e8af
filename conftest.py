"""Shared test infrastructure: which real services this run has, and a real Celery worker.

Without DATABASE_URL the suite runs on SQLite and skips, visibly, what needs PostgreSQL; with
REQUIRE_SERVICES=1 (CI) a missing service fails the run instead of skipping.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REQUIRE_SERVICES = os.environ.get("REQUIRE_SERVICES") == "1"
# pytest-xdist's worker id ("gw0", "gw1", ...), empty in a serial run. Each worker has its own
# test database (pytest-django appends the id); what else the workers share (the Celery queue,
# the cache's keys, log files) is made per worker below.
XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
# Tests hash passwords they never check: MD5 makes each a microsecond instead of PBKDF2's
# ~100 ms (about 170 of them per run before users were made without passwords).
TEST_PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _configure_test_settings() -> None:
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured

    try:
        settings.PASSWORD_HASHERS = TEST_PASSWORD_HASHERS
    except ImproperlyConfigured:
        return  # pure-module runs with -p no:django
    # The suite talks plain HTTP to its test client and live servers, as `make run` does
    # (LOCAL_HTTP, config/settings.py): no redirect to HTTPS, cookies without Secure.
    settings.LOCAL_HTTP = True
    settings.SECURE_SSL_REDIRECT = False
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    settings.SECURE_HSTS_SECONDS = 0
    # DEBUG is off by default, which names collectstatic's hashed copies; the suite runs without
    # a collectstatic and serves static files from the apps (live servers use the finders).
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    if not XDIST_WORKER:
        return
    # The subprocesses tests start (Celery workers, gunicorn) read these from the environment.
    queue = f"celery-test-{XDIST_WORKER}"
    prefix = f"campaign-desk-test-{XDIST_WORKER}"
    os.environ["CELERY_TASK_DEFAULT_QUEUE"] = queue
    os.environ["CACHE_KEY_PREFIX"] = prefix
    settings.CELERY_TASK_DEFAULT_QUEUE = queue
    # The queues by kind are named after it (config/settings.py celery_queues).
    from config.settings import celery_queues

    settings.TASK_QUEUES, settings.CELERY_TASK_QUEUES, settings.CELERY_TASK_ROUTES = celery_queues(
        queue
    )
    settings.CACHES["default"]["KEY_PREFIX"] = prefix
    from config.celery import app

    app.conf.task_default_queue = queue
    app.conf.task_queues = settings.CELERY_TASK_QUEUES
    app.conf.task_routes = settings.CELERY_TASK_ROUTES


_configure_test_settings()


def _reseed_catalog_after_flush(sender: Any, **kwargs: Any) -> None:
    """A TransactionTestCase flushes every table, the catalog its migration seeded included;
    Django sends post_migrate after the flush, and the catalog is put back here (under xdist a
    worker may run a plain TestCase after a transactional one)."""
    if getattr(sender, "name", "") != "catalog":
        return
    from catalog.models import RentalPlan
    from catalog.services import seed_catalog

    if not RentalPlan.objects.using(kwargs.get("using", "default")).exists():
        seed_catalog()


def _connect_reseed() -> None:
    try:
        from django.db.models.signals import post_migrate
    except ImportError:
        return
    post_migrate.connect(_reseed_catalog_after_flush, dispatch_uid="tests-reseed-catalog")


_connect_reseed()


def on_postgres() -> bool:
    from django.db import connection

    return connection.vendor == "postgresql"


# The files that hold a worker longest (issue 16, measured with --durations on 2026-12-01), in
# that order: they are handed out first (`make test` runs with --no-loadscope-reorder), so the
# last file an xdist worker takes is a short one and the workers finish together. xdist's
# own order (most tests first) handed out the two schema-fuzzing files, two tests each, last:
# one worker fuzzed alone for the last minute. A file missing here only runs later.
LONGEST_FIRST = (
    "campaigns/tests/test_schema_campaign_paths.py",
    "campaigns/tests/test_schema_other_paths.py",
    "tests/test_admin_boundaries.py",
    "tests/test_browser_newcomer.py",
    "tests/test_browser_campaign_page.py",
    "tests/test_benchmarks_smoke.py",
    "ledger/tests/test_browser.py",
    "ledger/tests/test_browser_next_plan.py",
    "tests/test_browser_charts.py",
    "tests/test_deployment.py",
    "mlflow_api/tests/test_mlflow_client.py",
    "mlflow_api/tests/test_integrations.py",
    "mlflow_api/tests/test_run_time.py",  # 20 s runs measured by the wall clock, two trainings
    "tests/test_client_clock.py",  # a 20 s run, a loop killed after 3 s
    "estimates/tests/test_worker_killed.py",
    "ledger/tests/test_queue_isolation.py",
    "ledger/tests/test_focus_validator.py",
    "ledger/tests/test_alert_worker.py",
    "ledger/tests/test_browser_alert_channels.py",
    "tests/test_browser_admin.py",
    "tests/test_oidc_sso.py",
    "mlflow_api/tests/test_mlflow_fidelity.py",
    "ledger/tests/test_bench_exports.py",
    "tests/test_client.py",
    "mlflow_api/tests/test_facade_fuzz.py",
    "tests/test_browser_large_plan.py",
    "tests/test_readme_curl.py",
    "ledger/tests/test_report_recovery.py",
    "campaigns/tests/test_metric_store_migration.py",
    "estimates/tests/test_worker.py",
    "tests/test_image.py",
    "campaigns/tests/test_api_runs.py",
    "ledger/tests/test_next_plan_from_lessons.py",
    "ledger/tests/test_item_fates_from_facts.py",
    "estimates/tests/test_calibration_from_timelines.py",
    "ledger/tests/test_report_timeline.py",
)


def _longest_files_first(items: list[pytest.Item]) -> None:
    rank = {path: i for i, path in enumerate(LONGEST_FIRST)}
    order = {id(item): i for i, item in enumerate(items)}

    def key(item: pytest.Item) -> tuple[int, int]:
        path = item.nodeid.split("::", 1)[0]
        return (rank.get(path, len(rank)), order[id(item)])

    items.sort(key=key)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    _longest_files_first(items)
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured

    try:
        settings.DATABASES  # noqa: B018
    except ImproperlyConfigured:
        return  # pure-module runs with -p no:django: nothing here needs services
    postgres = settings.DATABASES["default"]["ENGINE"].endswith("postgresql")
    broker = bool(settings.CELERY_BROKER_URL)
    for item in items:
        if "postgres" in item.keywords and not postgres:
            if REQUIRE_SERVICES:
                raise pytest.UsageError("REQUIRE_SERVICES=1 but DATABASE_URL is not PostgreSQL")
            item.add_marker(pytest.mark.skip(reason="needs PostgreSQL: set DATABASE_URL"))
        if "celery_worker" in item.keywords and not (broker and postgres):
            if REQUIRE_SERVICES:
                raise pytest.UsageError("REQUIRE_SERVICES=1 but CELERY_BROKER_URL is not set")
            item.add_marker(
                pytest.mark.skip(
                    reason="needs a Celery worker on Redis and PostgreSQL: "
                    "set CELERY_BROKER_URL and DATABASE_URL"
                )
            )


# ledger migration 0003 refuses TRUNCATE of these append-only tables, for every role; the test
# harness flushes the database between transactional tests with TRUNCATE, so it lifts them for
# that one transaction (DDL that only the tables' owner may run, never the application's role).
TRUNCATE_GUARDS = {
    "ledger_ledgerentry": "ledger_entry_no_truncate",
    "campaigns_planbaseline": "plan_baseline_no_truncate",
}


def _flush_past_truncate_guards() -> None:
    from django.db import transaction
    from django.db.backends.postgresql.operations import DatabaseOperations

    original = DatabaseOperations.execute_sql_flush
    if getattr(original, "lifts_truncate_guards", False):
        return

    def execute_sql_flush(self: DatabaseOperations, sql_list: list[str]) -> None:
        with transaction.atomic(using=self.connection.alias):
            with self.connection.cursor() as cursor:
                cursor.execute(
                    "SELECT c.relname, t.tgname FROM pg_trigger t "
                    "JOIN pg_class c ON c.oid = t.tgrelid WHERE t.tgname = ANY(%s)",
                    [list(TRUNCATE_GUARDS.values())],
                )
                guards = cursor.fetchall()
                for table, trigger in guards:
                    cursor.execute(f'ALTER TABLE "{table}" DISABLE TRIGGER "{trigger}"')
            original(self, sql_list)
            with self.connection.cursor() as cursor:
                for table, trigger in guards:
                    cursor.execute(f'ALTER TABLE "{table}" ENABLE ALWAYS TRIGGER "{trigger}"')

    execute_sql_flush.lifts_truncate_guards = True  # type: ignore[attr-defined]
    DatabaseOperations.execute_sql_flush = execute_sql_flush  # type: ignore[method-assign]


_flush_past_truncate_guards()


@pytest.fixture(scope="session")
def django_db_setup(
    request: pytest.FixtureRequest,
    django_test_environment: None,
    django_db_blocker: Any,
    django_db_use_migrations: bool,
    django_db_keepdb: bool,
    django_db_createdb: bool,
    django_db_modify_db_settings: None,
) -> Iterator[None]:
    """pytest-django's test databases, except that on PostgreSQL each xdist worker copies a
    migrated template instead of migrating its own (tests/template_database.py). `--reuse-db`
    without `--create-db` keeps an existing database as pytest-django does (the serial session
    of `make test` reuses the first session's `test_<name>_gw0`)."""
    from django.db import connection
    from django.test.utils import setup_databases, teardown_databases
    from pytest_django.fixtures import _get_databases_for_setup

    from tests import template_database

    verbosity = request.config.option.verbose
    keep = django_db_keepdb and not django_db_createdb
    aliases, serialized = _get_databases_for_setup(request.session.items)
    original = connection.settings_dict["NAME"]
    with django_db_blocker.unblock():  # the existence check below asks the server too
        copied = (
            XDIST_WORKER
            and django_db_use_migrations
            and connection.vendor == "postgresql"
            and not serialized  # serialized_rollback needs the contents setup_databases keeps
            and not (keep and _test_database_exists(connection))
        )
        if copied:
            template_database.copy_for_worker(connection, XDIST_WORKER, max(verbosity - 1, 0))
            config = None
        else:
            config = setup_databases(
                verbosity=verbosity,
                interactive=False,
                keepdb=keep,
                aliases=aliases,  # type: ignore[arg-type]  # a set of names, as pytest-django passes
                serialized_aliases=serialized,
            )
    yield
    if django_db_keepdb:
        return
    with django_db_blocker.unblock():
        if config is not None:
            teardown_databases(config, verbosity=verbosity)
        else:
            connection.creation.destroy_test_db(original, verbosity=0)


def _test_database_exists(connection: Any) -> bool:
    from tests.template_database import database_exists

    with connection._nodb_cursor() as server:
        return database_exists(server, connection.creation._get_test_db_name())


def _database_url_for_worker() -> str:
    from django.db import connection

    from bench.databases import db_url, server_admin_url

    s = connection.settings_dict
    return db_url(server_admin_url(s), s["NAME"])


def start_worker(extra_env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """Start `celery worker` in a new process on the test database; return once it answers."""
    from config.celery import app

    env = os.environ.copy()
    env["DATABASE_URL"] = _database_url_for_worker()
    env["CELERY_TASK_ALWAYS_EAGER"] = "0"
    env.update(extra_env or {})
    default_log = f"/tmp/campaign-desk-test-worker{'-' + XDIST_WORKER if XDIST_WORKER else ''}.log"
    log = Path(os.environ.get("CELERY_TEST_LOG", default_log))
    hostname = f"test-{os.getpid()}-{time.monotonic_ns()}@localhost"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "--pool=prefork",
            "--concurrency=1",
            "--loglevel=info",
            f"--hostname={hostname}",
            "--without-gossip",
            "--without-mingle",
        ],
        env=env,
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
        cwd=Path(__file__).parent,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the Celery worker exited early; see {log}")
        replies = app.control.ping(destination=[hostname], timeout=1.0)
        if replies:
            proc.hostname = hostname  # type: ignore[attr-defined]
            return proc
    proc.kill()
    raise RuntimeError(f"the Celery worker did not answer within 60 s; see {log}")


def stop_worker(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def module_celery_worker(
    django_db_setup: None, django_db_blocker: Any
) -> Iterator[subprocess.Popen[bytes]]:
    """One worker process per test module (starting one takes seconds), on this xdist worker's
    own queue and test database."""
    from config.celery import app

    with django_db_blocker.unblock():
        app.control.purge()  # messages an earlier module left name rows that are gone
    proc = start_worker()
    try:
        yield proc
    finally:
        stop_worker(proc)


@pytest.fixture
def celery_worker(
    transactional_db: None, module_celery_worker: subprocess.Popen[bytes]
) -> subprocess.Popen[bytes]:
    """A real worker process on Redis and the test database (tests must commit their data)."""
    if module_celery_worker.poll() is not None:
        raise RuntimeError("the module's Celery worker died; see its log")
    return module_celery_worker


def queued_messages() -> int:
    """Messages waiting on this run's Celery queue (the default queue, one per xdist worker)."""
    # Every queue this run's tasks are routed to (settings.TASK_QUEUES: default, delivery,
    # reports, forecasts), not only the default one.
    from django.conf import settings

    from config.celery import app

    with app.connection_for_read() as connection:
        client = connection.default_channel.client
        return sum(int(client.llen(name)) for name in settings.TASK_QUEUES.values())


def wait_for(predicate, timeout: float = 30.0, interval: float = 0.2):  # type: ignore[no-untyped-def]
    """Poll `predicate` until it returns something truthy, or fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"condition not met within {timeout} s")

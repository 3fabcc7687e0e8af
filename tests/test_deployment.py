"""The production shape: docker-compose.yml services and variables, the TLS proxy, the
database roles, and `check --deploy`."""

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

import psycopg
import pytest
import yaml
from django.db import connection
from django.test import SimpleTestCase

from conftest import REQUIRE_SERVICES

ROOT = Path(__file__).resolve().parent.parent
APP_SERVICES = ("web", "worker", "beat")


def caddy_version(text: str) -> tuple[int, ...]:
    """(2, 6, 2) from "2.6.2", "v2.8.4 h1:…" or an image tag "2.8"."""
    number = text.strip().split()[0].lstrip("v").split("-")[0]
    return tuple(int(part) for part in number.split("."))


def db_user(env: dict[str, str]) -> str:
    """The role in DATABASE_URL (its password is a compose ${…} expression, not URL-safe)."""
    url = env["DATABASE_URL"]
    assert url.startswith("postgres://"), url
    return url.removeprefix("postgres://").split(":", 1)[0]


class ComposeFileTests(SimpleTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
        cls.services = cls.compose["services"]

    def test_it_runs_web_worker_beat_postgres_and_redis(self) -> None:
        self.assertLessEqual({"web", "worker", "beat", "db", "redis"}, set(self.services))
        self.assertTrue(self.services["db"]["image"].startswith("postgres"))
        self.assertTrue(self.services["redis"]["image"].startswith("redis"))

    def test_web_is_gunicorn_and_the_workers_are_celery(self) -> None:
        self.assertEqual(self.services["web"]["command"][0], "gunicorn")
        self.assertIn("config.wsgi:application", self.services["web"]["command"])
        self.assertEqual(
            self.services["worker"]["command"][:4], ["celery", "-A", "config", "worker"]
        )
        self.assertEqual(self.services["beat"]["command"][:4], ["celery", "-A", "config", "beat"])

    def test_the_app_services_get_the_production_variables(self) -> None:
        for name in APP_SERVICES:
            env = self.services[name]["environment"]
            with self.subTest(service=name):
                self.assertEqual(env["DEBUG"], "0")
                self.assertTrue(env["DATABASE_URL"].startswith("postgres://"))
                self.assertIn("@db:5432/", env["DATABASE_URL"])
                self.assertEqual(env["CELERY_BROKER_URL"], "redis://redis:6379/0")
                # The cache (throttle buckets shared by the gunicorn workers) apart from the
                # queues, so that clearing it never drops a task.
                self.assertEqual(env["REDIS_URL"], "redis://redis:6379/1")
                self.assertEqual(env["CELERY_VISIBILITY_TIMEOUT"], "900")
                self.assertGreater(float(env["REPORT_STALE_SECONDS"]), 0)
                self.assertIn("SECRET_KEY", env)
                self.assertIn("ALLOWED_HOSTS", env)
                self.assertTrue(env["CSRF_TRUSTED_ORIGINS"].endswith("https://localhost}"))

    def test_the_application_connects_as_its_own_role_and_the_owner_migrates(self) -> None:
        app_users = {db_user(self.services[name]["environment"]) for name in APP_SERVICES}
        self.assertEqual(app_users, {"campaign_desk_app"})
        owner = self.services["db"]["environment"]["POSTGRES_USER"]
        self.assertEqual(db_user(self.services["migrate"]["environment"]), owner)
        self.assertNotEqual(owner, "campaign_desk_app")
        # The postgres image runs the init hook that creates the application role.
        mounts = self.services["db"]["volumes"]
        self.assertIn(
            "./deploy/postgres-init.sh:/docker-entrypoint-initdb.d/10-app-role.sh:ro", mounts
        )
        self.assertIn("./deploy/postgres-init.sql:/deploy/postgres-init.sql:ro", mounts)
        hook = (ROOT / "deploy" / "postgres-init.sh").read_text()
        self.assertIn("--file /deploy/postgres-init.sql", hook)
        self.assertIn("campaign_desk_app", hook)
        self.assertTrue(os.access(ROOT / "deploy" / "postgres-init.sh", os.X_OK))

    def test_a_tls_proxy_fronts_web_which_is_not_published(self) -> None:
        proxy = self.services["proxy"]
        self.assertTrue(proxy["image"].startswith("caddy:"))
        self.assertEqual(set(proxy["ports"]), {"80:80", "443:443"})
        self.assertIn("./Caddyfile:/etc/caddy/Caddyfile:ro", proxy["volumes"])
        self.assertEqual(proxy["depends_on"]["web"]["condition"], "service_healthy")
        self.assertNotIn("ports", self.services["web"])
        self.assertEqual(self.services["web"]["expose"], ["8000"])
        for name, service in self.services.items():
            if name != "proxy":
                with self.subTest(service=name):
                    self.assertNotIn("ports", service)

    def test_the_caddyfile_terminates_tls_with_its_own_ca_and_proxies_to_web(self) -> None:
        caddyfile = (ROOT / "Caddyfile").read_text()
        self.assertIn("{$SITE_ADDRESS:localhost} {", caddyfile)
        self.assertIn("tls internal", caddyfile)
        self.assertIn("reverse_proxy web:8000", caddyfile)
        caddy = shutil.which("caddy")
        if caddy is None:
            self.skipTest("caddy is not installed: the Caddyfile was checked as text only")
        pinned = caddy_version(self.services["proxy"]["image"].split(":", 1)[1])
        local = caddy_version(
            subprocess.run([caddy, "version"], capture_output=True, text=True).stdout
        )
        older = local < pinned
        if older:
            # Debian's caddy (2.6.2) predates request_buffers (2.6.4): the rest is checked.
            caddyfile = "\n".join(
                line for line in caddyfile.splitlines() if "request_buffers" not in line
            )
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "Caddyfile").write_text(caddyfile)
            config = self.adapted(caddy, Path(tmp) / "Caddyfile")
        server = config["apps"]["http"]["servers"]["srv0"]
        self.assertEqual(server["listen"], [":443"])
        self.assertEqual(server["read_header_timeout"], 10_000_000_000)  # ns
        route = server["routes"][0]
        self.assertEqual(route["match"], [{"host": ["desk.example.org"]}])
        handlers = [h for r in route["handle"][0]["routes"] for h in r["handle"]]
        proxy = next(h for h in handlers if h["handler"] == "reverse_proxy")
        self.assertEqual(proxy["upstreams"], [{"dial": "web:8000"}])
        # Caddy's reverse_proxy sets X-Forwarded-Proto itself; nothing here may override it.
        self.assertNotIn("headers", proxy)
        issuers = config["apps"]["tls"]["automation"]["policies"][0]["issuers"]
        self.assertEqual(issuers, [{"module": "internal"}])
        if older:
            self.skipTest(
                f"the local caddy {'.'.join(map(str, local))} is older than the image's "
                f"{'.'.join(map(str, pinned))}: adapted without request_buffers (checked as text)"
            )
        self.assertEqual(proxy["request_buffers"], 1 << 20)

    def adapted(self, caddy: str, path: Path) -> dict[str, Any]:
        adapted = subprocess.run(
            [caddy, "adapt", "--config", str(path), "--adapter", "caddyfile"],
            capture_output=True,
            text=True,
            env={**os.environ, "SITE_ADDRESS": "desk.example.org"},
        )
        self.assertEqual(adapted.returncode, 0, adapted.stderr)
        config: dict[str, Any] = json.loads(adapted.stdout)
        return config

    def test_the_proxy_image_is_pinned_to_a_minor_version(self) -> None:
        # The Caddyfile's request_buffers needs caddy 2.6.4 or later; "caddy:2" would float.
        version = caddy_version(self.services["proxy"]["image"].split(":", 1)[1])
        self.assertEqual(len(version), 2, self.services["proxy"]["image"])
        self.assertGreaterEqual(version, (2, 7))

    def test_services_wait_for_healthy_dependencies(self) -> None:
        for name in ("proxy", "db", "redis", "web", "worker"):
            with self.subTest(service=name):
                self.assertIn("healthcheck", self.services[name])
        # The web probe names a host that ALLOWED_HOSTS accepts (Django answers 400 otherwise).
        self.assertIn("'Host': host", self.services["web"]["healthcheck"]["test"][-1])
        self.assertEqual(
            self.services["web"]["depends_on"]["redis"]["condition"], "service_healthy"
        )
        self.assertEqual(
            self.services["migrate"]["depends_on"]["db"]["condition"], "service_healthy"
        )


class DeployCheckTests(SimpleTestCase):
    def test_check_deploy_is_clean_with_the_production_variables(self) -> None:
        env = {
            **os.environ,
            "DEBUG": "0",
            "SECRET_KEY": "x" * 20 + "a-long-random-production-secret-key-1234567890",
            "ALLOWED_HOSTS": "desk.example.org",
            "DATABASE_URL": "sqlite:////tmp/deploy-check.sqlite3",
        }
        result = subprocess.run(
            [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("no issues", result.stdout)


class DefaultsWithoutEnvironmentTests(SimpleTestCase):
    """Issue 19 (Medium 14): without environment DEBUG was on and SECRET_KEY a constant in the
    source. Now DEBUG is off and the installation generates its own key, once, into a file
    only its owner can read (config/secret_key.py; README, Production notes)."""

    def settings_of(self, expression: str, **env: str) -> subprocess.CompletedProcess[str]:
        base = {
            k: v
            for k, v in os.environ.items()
            if k not in {"DEBUG", "SECRET_KEY", "SECRET_KEY_FILE", "LOCAL_HTTP"}
        }
        return subprocess.run(
            [sys.executable, "-c", f"from config import settings as s; print({expression})"],
            cwd=ROOT,
            env={**base, **env},
            capture_output=True,
            text=True,
            check=False,
        )

    def test_debug_is_off_unless_the_environment_turns_it_on(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            key = f"{tmp}/key"
            self.assertEqual(
                self.settings_of("s.DEBUG", SECRET_KEY_FILE=key).stdout.strip(), "False"
            )
            on = self.settings_of("s.DEBUG", SECRET_KEY_FILE=key, DEBUG="1")
            self.assertEqual(on.stdout.strip(), "True")

    def test_the_key_is_generated_once_into_a_private_file_and_shared(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "data" / "secret_key"
            first = self.settings_of("s.SECRET_KEY", SECRET_KEY_FILE=str(path))
            second = self.settings_of("s.SECRET_KEY", SECRET_KEY_FILE=str(path))
            self.assertEqual(first.returncode, 0, first.stderr)
            key = first.stdout.strip()
            self.assertEqual(second.stdout.strip(), key)  # every process signs with one key
            self.assertGreaterEqual(len(key), 50)
            self.assertNotIn("insecure", key)
            self.assertEqual(path.read_text().strip(), key)
            self.assertEqual(stat.S_IMODE(path.stat().st_mode), 0o600)
            other = Path(tmp) / "other"
            self.assertNotEqual(
                self.settings_of("s.SECRET_KEY", SECRET_KEY_FILE=str(other)).stdout.strip(), key
            )  # per installation

    def test_the_environments_key_wins_and_writes_no_file(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "secret_key"
            given = "e" * 20 + "-a-key-from-the-environment-0123456789"
            answer = self.settings_of("s.SECRET_KEY", SECRET_KEY=given, SECRET_KEY_FILE=str(path))
            self.assertEqual(answer.stdout.strip(), given)
            self.assertFalse(path.exists())

    def test_a_place_it_cannot_write_is_a_clear_error(self) -> None:
        answer = self.settings_of("s.SECRET_KEY", SECRET_KEY_FILE="/proc/campaign-desk/key")
        self.assertNotEqual(answer.returncode, 0)
        self.assertIn(
            "SECRET_KEY is not set and /proc/campaign-desk/key cannot be written", answer.stderr
        )

    def test_the_default_file_is_git_ignored(self) -> None:
        self.assertIn(".secret_key", (ROOT / ".gitignore").read_text().split())


def settings_in(env: dict[str, str], expression: str) -> str:
    """Evaluate `expression` on the settings of a fresh process with `env` as its environment."""
    base = {k: v for k, v in os.environ.items() if k not in {"REDIS_URL", "CELERY_BROKER_URL"}}
    result = subprocess.run(
        [sys.executable, "-c", f"from config import settings as s; print({expression})"],
        cwd=ROOT,
        env={**base, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.strip()


class CacheSettingsTests(SimpleTestCase):
    expression = "s.CACHES['default']['BACKEND'], s.CACHES['default'].get('LOCATION')"

    def test_redis_url_puts_the_cache_in_redis(self) -> None:
        self.assertEqual(
            settings_in({"REDIS_URL": "redis://cache:6379/1"}, self.expression),
            "django.core.cache.backends.redis.RedisCache redis://cache:6379/1",
        )

    def test_without_redis_url_the_redis_broker_holds_the_cache(self) -> None:
        self.assertEqual(
            settings_in({"CELERY_BROKER_URL": "redis://queue:6379/0"}, self.expression),
            "django.core.cache.backends.redis.RedisCache redis://queue:6379/0",
        )

    def test_the_embedded_shape_keeps_a_local_memory_cache(self) -> None:
        self.assertEqual(
            settings_in({}, self.expression),
            "django.core.cache.backends.locmem.LocMemCache None",
        )


def psql(*args: str) -> None:
    subprocess.run(
        ["psql", "-v", "ON_ERROR_STOP=1", "-q", *args], check=True, capture_output=True, text=True
    )


@pytest.mark.postgres
@pytest.mark.django_db
def test_the_application_role_cannot_switch_the_append_only_protection_off() -> None:
    """deploy/postgres-init.sql on a scratch database migrated by its owner: the role web,
    worker and beat use reads and writes rows but can neither truncate, alter or drop the
    tables' triggers, replace their function, nor silence triggers for its session."""
    if shutil.which("psql") is None:
        if REQUIRE_SERVICES:
            pytest.fail("REQUIRE_SERVICES=1 but psql is not installed")
        pytest.skip("needs psql")
    s = connection.settings_dict
    host, port = s.get("HOST") or "127.0.0.1", str(s.get("PORT") or "5432")
    admin = ["-h", host, "-p", port, "-U", s.get("USER") or "postgres"]
    suffix = uuid.uuid4().hex[:8]
    owner, app, db = f"cd_owner_{suffix}", f"cd_app_{suffix}", f"cd_roles_{suffix}"
    password = uuid.uuid4().hex
    psql(*admin, "-d", "postgres", "-c", f"CREATE ROLE {owner} LOGIN PASSWORD '{password}'")
    try:
        psql(*admin, "-d", "postgres", "-c", f"CREATE DATABASE {db} OWNER {owner}")
        psql(
            *admin,
            "-d",
            db,
            "--set",
            f"owner={owner}",
            "--set",
            f"db={db}",
            "--set",
            f"app_role={app}",
            "--set",
            f"app_password={password}",
            "--file",
            str(ROOT / "deploy" / "postgres-init.sql"),
        )
        env = {**os.environ, "DATABASE_URL": f"postgres://{owner}:{password}@{host}:{port}/{db}"}
        migrated = subprocess.run(
            [sys.executable, "manage.py", "migrate", "--noinput", "-v0"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert migrated.returncode == 0, migrated.stderr[-3000:]

        with psycopg.connect(
            host=host, port=port, dbname=db, user=app, password=password, autocommit=True
        ) as conn:
            role = conn.execute(
                "SELECT rolsuper, rolcreaterole, rolbypassrls FROM pg_roles "
                "WHERE rolname = current_user"
            ).fetchone()
            assert role == (False, False, False)
            owned = conn.execute(
                "SELECT count(*) FROM pg_class WHERE relowner = "
                "(SELECT oid FROM pg_roles WHERE rolname = current_user)"
            ).fetchone()
            assert owned == (0,)
            # Rows: yes.
            conn.execute("INSERT INTO auth_group (name) VALUES ('written by the app role')")
            assert conn.execute("SELECT count(*) FROM ledger_ledgerentry").fetchone() == (0,)
            # Switching the protection off: no.
            for sql in (
                "TRUNCATE ledger_ledgerentry",
                "TRUNCATE campaigns_planbaseline",
                "ALTER TABLE ledger_ledgerentry DISABLE TRIGGER ledger_entry_append_only",
                "ALTER TABLE ledger_ledgerentry DISABLE TRIGGER ALL",
                "DROP TRIGGER ledger_entry_no_truncate ON ledger_ledgerentry",
                "ALTER TABLE campaigns_planbaseline DISABLE TRIGGER plan_baseline_append_only",
                "CREATE OR REPLACE FUNCTION campaign_desk_refuse_rewrite() RETURNS trigger "
                "LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$",
                "DROP FUNCTION campaign_desk_refuse_rewrite() CASCADE",
                "SET session_replication_role = replica",
            ):
                with pytest.raises(psycopg.errors.InsufficientPrivilege):
                    conn.execute(sql)
    finally:
        psql(*admin, "-d", "postgres", "-c", f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")
        psql(*admin, "-d", "postgres", "-c", f"DROP ROLE IF EXISTS {app}")
        psql(*admin, "-d", "postgres", "-c", f"DROP ROLE IF EXISTS {owner}")


class BackgroundWorkTests(SimpleTestCase):
    """Issue 19 (2b): queues by kind with a worker service each, time limits on every task,
    and services that restart themselves with health checks through the broker."""

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]

    def test_each_queue_has_its_own_worker_service(self) -> None:
        from config.settings import celery_queues

        # The production names (under xdist the test settings prefix them per worker).
        _names, production_queues, _routes = celery_queues("celery")
        queues = set(production_queues)
        self.assertEqual(queues, {"celery", "delivery", "reports", "forecasts"})
        served: dict[str, str] = {}
        for name, service in self.services.items():
            command = service.get("command") or []
            if command[:4] == ["celery", "-A", "config", "worker"]:
                queue = command[command.index("-Q") + 1]
                served[queue] = name
                with self.subTest(service=name):
                    self.assertTrue(any(c.startswith("--concurrency=") for c in command))
                    node = command[command.index("-n") + 1].split("@")[0]
                    self.assertIn(f"-d {node}@$$HOSTNAME", service["healthcheck"]["test"][-1])
                    # The web's settings but its database limits (docs/operations.md §1).
                    limits = dict.fromkeys(("DB_POOL_MAX_SIZE", "DB_STATEMENT_TIMEOUT"))
                    web = self.services["web"]["environment"]
                    self.assertEqual(service["environment"] | limits, web | limits)
        self.assertEqual(set(served), queues)

    def test_every_task_is_routed_and_has_time_limits_below_the_visibility_timeout(self) -> None:
        from django.conf import settings

        from config.celery import app

        app.loader.import_default_modules()
        ours = {n: t for n, t in app.tasks.items() if not n.startswith("celery.")}
        self.assertGreaterEqual(len(ours), 8)
        visibility = settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"]
        for name, task in ours.items():
            with self.subTest(task=name):
                self.assertTrue(task.acks_late and task.reject_on_worker_lost)
                self.assertIn(name, settings.TASK_TIME_LIMITS)
                self.assertTrue(0 < task.soft_time_limit < task.time_limit < visibility)
                queue = app.amqp.router.route({}, name)["queue"].name
                self.assertIn(queue, settings.CELERY_TASK_QUEUES)
        delivery = app.tasks["ledger.deliver_alerts"]
        self.assertLess(delivery.time_limit, settings.ALERT_DELIVERY_LEASE_SECONDS)
        self.assertGreater(delivery.soft_time_limit, 2 * settings.ALERT_WEBHOOK_TIMEOUT)
        self.assertEqual(
            app.amqp.router.route({}, "ledger.deliver_alerts")["queue"].name,
            settings.TASK_QUEUES["delivery"],
        )

    def test_web_workers_and_beat_restart_themselves_and_beat_probes_the_broker(self) -> None:
        for name, service in self.services.items():
            if name == "migrate":
                continue
            with self.subTest(service=name):
                self.assertEqual(service.get("restart"), "unless-stopped")
                self.assertIn("healthcheck", service)
        self.assertIn("ensure_connection", self.services["beat"]["healthcheck"]["test"][-1])


class SlowClientTests(SimpleTestCase):
    """Issue 19 (High 5): the worker model and the proxy settings that carry it."""

    def test_web_runs_threaded_gunicorn_workers(self) -> None:
        web = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]["web"]
        command = web["command"]
        self.assertEqual(command[command.index("--worker-class") + 1], "gthread")
        workers = int(command[command.index("--workers") + 1])
        threads = int(command[command.index("--threads") + 1])
        self.assertGreaterEqual(workers * threads, 64)  # more than 50 slow clients at once
        self.assertGreaterEqual(int(command[command.index("--timeout") + 1]), 60)

    def test_the_proxy_cuts_slow_headers_and_buffers_small_bodies(self) -> None:
        caddyfile = (ROOT / "Caddyfile").read_text()
        self.assertIn("read_header 10s", caddyfile)
        self.assertIn("request_buffers 1MiB", caddyfile)


def test_hsts_preload_is_only_on_by_setting() -> None:
    base = {**os.environ, "DEBUG": "0", "SECRET_KEY": "k" * 60, "DATABASE_URL": "sqlite://"}
    code = "from django.conf import settings; print(settings.SECURE_HSTS_PRELOAD)"
    run = [sys.executable, "-c", f"import django; django.setup(); {code}"]
    env = {**base, "DJANGO_SETTINGS_MODULE": "config.settings"}
    off = subprocess.run(run, env=env, capture_output=True, text=True, cwd=ROOT, check=True)
    on = subprocess.run(
        run, env={**env, "SECURE_HSTS_PRELOAD": "1"}, capture_output=True, text=True, cwd=ROOT
    )
    assert off.stdout.strip() == "False" and on.stdout.strip() == "True"

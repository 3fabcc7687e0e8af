"""The production shape: docker-compose.yml services and variables, and `check --deploy`."""

import os
import subprocess
import sys
from pathlib import Path

import yaml
from django.test import SimpleTestCase

ROOT = Path(__file__).resolve().parent.parent


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
        for name in ("web", "worker", "beat"):
            env = self.services[name]["environment"]
            with self.subTest(service=name):
                self.assertEqual(env["DEBUG"], "0")
                self.assertTrue(env["DATABASE_URL"].startswith("postgres://"))
                self.assertIn("@db:5432/", env["DATABASE_URL"])
                self.assertEqual(env["CELERY_BROKER_URL"], "redis://redis:6379/0")
                self.assertIn("SECRET_KEY", env)
                self.assertIn("ALLOWED_HOSTS", env)

    def test_services_wait_for_healthy_dependencies(self) -> None:
        for name in ("db", "redis", "web", "worker"):
            with self.subTest(service=name):
                self.assertIn("healthcheck", self.services[name])
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

    def test_it_refuses_to_start_without_a_secret_key_when_debug_is_off(self) -> None:
        env = {k: v for k, v in os.environ.items() if k != "SECRET_KEY"}
        env.update({"DEBUG": "0", "ALLOWED_HOSTS": "x"})
        result = subprocess.run(
            [sys.executable, "manage.py", "check"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("SECRET_KEY must be set", result.stderr)

"""The client as a package of its own (issue 33 item 6): `make client-wheel` builds
dist/campaign_desk_client-*.whl, a fresh virtualenv installs it and nothing else, and its `cdesk`
command answers --help and each command against a live server; `cdesk.init/log/finish`."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

from django.test import LiveServerTestCase

from campaigns.models import MetricSummary, PlannedItem, Run, Team
from campaigns.tests.factories import (
    api_token,
    celery_eager,
    committed_campaign,
    ingest_key,
    make_user,
)

ROOT = Path(__file__).resolve().parent.parent
SPEC = {
    "model": {"parameters": 3.5e8, "layers": 24, "hidden_size": 1024, "attention_heads": 16,
              "vocab_size": 50257},
    "training": {"tokens": 2e9, "sequence_length": 512, "micro_batch_size": 1},
    "hardware": {"gpu": "RTX-4090", "count": 1, "utilization": 0.4},
    "cost": {"hourly_rate_per_gpu": "0.70", "currency": "USD"},
}  # fmt: skip


def _pip_names(python: Path) -> set[str]:
    listed = subprocess.run(
        [str(python), "-m", "pip", "list", "--format=json", "--disable-pip-version-check"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return {row["name"].lower() for row in json.loads(listed.stdout)}


class TheClientWheel(LiveServerTestCase):
    venv: Path
    workdir: Path

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        built = subprocess.run(
            ["make", "-s", "client-wheel"], cwd=ROOT, capture_output=True, text=True
        )
        assert built.returncode == 0, built.stdout + built.stderr
        cls.workdir = Path(tempfile.mkdtemp(prefix="cd-client-wheel-"))
        cls.venv = cls.workdir / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(cls.venv)], check=True)
        cls.before = _pip_names(cls.venv / "bin" / "python")
        wheels = sorted((ROOT / "dist").glob("campaign_desk_client-*.whl"))
        installed = subprocess.run(
            [str(cls.venv / "bin" / "python"), "-m", "pip", "install", "--no-index",
             "--disable-pip-version-check", "--quiet", str(wheels[-1])],
            capture_output=True, text=True,
        )  # fmt: skip
        assert installed.returncode == 0, installed.stderr

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.workdir, ignore_errors=True)
        super().tearDownClass()

    def setUp(self) -> None:
        self.team = Team.objects.create(name="nlp")
        self.user = make_user("pia", team=self.team, role="planner")
        self.campaign = committed_campaign(self.team)
        self.item = PlannedItem.objects.get(campaign=self.campaign, name="baseline")
        self.config = self.workdir / f"config-{self._testMethodName}"

    def cdesk(self, *args: str, token: str | None = None) -> subprocess.CompletedProcess[str]:
        env = {
            "PATH": f"{self.venv / 'bin'}:/usr/bin:/bin",
            "HOME": str(self.workdir),
            "XDG_CONFIG_HOME": str(self.config),
        }
        if token:
            env |= {"CAMPAIGN_DESK_URL": self.live_server_url, "CAMPAIGN_DESK_KEY": token}
        return subprocess.run(
            [str(self.venv / "bin" / "cdesk"), *args], capture_output=True, text=True, env=env,
            cwd=self.workdir, timeout=120,
        )  # fmt: skip

    def test_the_wheel_installs_nothing_else_and_runs_without_the_server(self) -> None:
        self.assertEqual(_pip_names(self.venv / "bin" / "python") - self.before,
                         {"campaign-desk-client"})  # fmt: skip
        python = self.venv / "bin" / "python"
        probe = "import cdesk, campaign_desk_client as c; print(c.__version__, cdesk.init.__name__)"
        out = subprocess.run([str(python), "-c", probe], capture_output=True, text=True)
        # The version installed is the one the changelog's newest entry describes.
        newest = re.search(r"^## (\S+)", (ROOT / "client" / "CHANGELOG.md").read_text(), re.M)
        assert newest is not None
        self.assertEqual(out.stdout.strip(), f"{newest.group(1)} init", out.stderr)
        helped = self.cdesk("--help")
        self.assertEqual(helped.returncode, 0, helped.stderr)
        for command in ("login", "runs", "stop", "report", "estimate"):
            self.assertIn(command, helped.stdout)
        self.assertIn("--reason", self.cdesk("stop", "--help").stdout)
        self.assertEqual(self.cdesk("stop", "r1").returncode, 2)  # no --reason: usage error

    def test_each_command_against_a_live_server(self) -> None:
        token = api_token(self.user)
        login = self.cdesk("login", "--url", self.live_server_url, "--token", token)
        self.assertEqual(login.returncode, 0, login.stderr)
        saved = self.config / "cdesk" / "config.json"
        self.assertEqual(stat.S_IMODE(saved.stat().st_mode), 0o600)
        self.assertNotEqual(self.cdesk("login", "--url", self.live_server_url, "--token",
                                       "cdt_wrong").returncode, 0)  # fmt: skip
        loop = self.campaign_run("r-cli")
        runs = self.cdesk("runs")  # the saved login
        self.assertEqual(runs.stdout.splitlines(), [f"{self.campaign.pk}\tr-cli\tfull\trunning"])
        listed = json.loads(
            self.cdesk("--json", "runs", "--campaign", str(self.campaign.pk)).stdout
        )
        self.assertEqual([r["run_id"] for r in listed], ["r-cli"])
        stopped = self.cdesk("stop", "r-cli", "--reason", "out of budget")
        self.assertEqual(stopped.stdout.strip(), "r-cli\tstopped", stopped.stderr)
        self.assertEqual(Run.objects.get(run_id="r-cli").stop_reason, "out of budget")
        self.assertTrue(loop)
        spec = self.workdir / "spec.json"
        spec.write_text(json.dumps(SPEC))
        estimate = self.cdesk("estimate", str(spec))
        fields = dict(line.split("\t") for line in estimate.stdout.splitlines())
        self.assertEqual(fields["fits_in_memory"], "True", estimate.stdout + estimate.stderr)
        self.assertGreater(float(fields["gpu_hours"]), 0)
        self.assertTrue(fields["cost"].endswith(" USD"))
        with celery_eager():
            report = self.cdesk("report", str(self.campaign.pk), "--format", "markdown")
        self.assertEqual(report.returncode, 0, report.stderr)
        self.assertIn(self.campaign.title, report.stdout)
        refused = self.cdesk("stop", "no-such-run", "--reason", "x", token=token)
        self.assertEqual(refused.returncode, 1)
        self.assertIn("404", refused.stderr)

    def campaign_run(self, run_id: str) -> bool:
        from campaign_desk_client import CampaignDesk

        desk = CampaignDesk(self.live_server_url, ingest_key(self.campaign))
        desk.run(campaign=self.campaign.pk, run_id=run_id, variant=self.item.pk)
        return True

    def test_init_log_finish_at_module_level(self) -> None:
        import cdesk

        os.environ["CAMPAIGN_DESK_URL"] = self.live_server_url
        os.environ["CAMPAIGN_DESK_KEY"] = ingest_key(self.campaign)
        self.addCleanup(os.environ.pop, "CAMPAIGN_DESK_URL", None)
        self.addCleanup(os.environ.pop, "CAMPAIGN_DESK_KEY", None)
        run = cdesk.init(campaign=self.campaign.pk, run_id="fluent", variant=self.item.pk)
        with self.assertRaises(RuntimeError):
            cdesk.init(campaign=self.campaign.pk, run_id="another")
        for step in range(3):
            cdesk.log(step, loss=1.0 / (step + 1))
        cdesk.finish(observed_hours=0.5)
        self.assertTrue(run.finished)
        stored = Run.objects.get(run_id="fluent")
        self.assertEqual((stored.status, str(stored.observed_hours)), ("completed", "0.50"))
        self.assertEqual(MetricSummary.objects.get(run=stored, name="loss").count, 3)
        with self.assertRaises(RuntimeError):
            cdesk.log(4, loss=0.1)

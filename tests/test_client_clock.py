"""The shipped client measures its run's wall time (docs/client.md, docs/domain.md §5.8): it
sends its start, a heartbeat with its GPU count while the run is open, and its end when the
`with` block is left; a loop killed with SIGKILL leaves a run whose hours end at its last
heartbeat once the sweep runs. Against a scripted loopback server (what goes on the wire) and
Campaign Desk's live server (what is recorded)."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
from datetime import datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any
from unittest import mock

from django.test import LiveServerTestCase, SimpleTestCase, override_settings
from django.utils import timezone

from campaign_desk_client import detect_gpus
from campaigns.models import Campaign, Run, Team
from campaigns.services import run_lifecycle
from campaigns.services.keys import issue_ingest_key
from campaigns.services.plans import commit_plan
from campaigns.tests.factories import make_plannable, make_user
from tests.test_client import Answer, Script, loopback, quick_desk

ROOT = Path(__file__).resolve().parent.parent
CREATED = Answer(201, {"run_id": "r1", "status": "running", "finished_at": None})


def answer_by_path(request: Any) -> Answer:
    if request.path.endswith("/heartbeat/"):
        return Answer(200, {"run_id": "r1", "status": "running"})
    if request.path.endswith("/finish/"):
        return Answer(200, {"run_id": "r1", "status": "completed"})
    return CREATED


class OnTheWire(SimpleTestCase):
    def test_the_run_sends_its_start_gpus_heartbeats_without_a_key_and_its_end(self) -> None:
        script = Script(answer_by_path)
        with loopback(script) as url, mock.patch.dict(os.environ, {"CUDA_VISIBLE_DEVICES": "0,1"}):
            desk = quick_desk(url)
            with desk.run(campaign=7, run_id="r1", heartbeat_seconds=0.05) as run:
                deadline = time.monotonic() + 5
                while run.heartbeat is not None and run.heartbeat.sent < 2:
                    self.assertLess(time.monotonic(), deadline, "no heartbeat was sent")
                    time.sleep(0.02)
        create, *beats, finish = script.seen
        body = create.json()
        self.assertEqual((body["gpus"], body["heartbeat_seconds"]), (2, 1))
        started = datetime.fromisoformat(body["started_at"])
        self.assertLess(abs((timezone.now() - started).total_seconds()), 10)
        self.assertGreaterEqual(len(beats), 2)
        for beat in beats:
            self.assertEqual((beat.path, beat.json()), ("/api/v1/runs/r1/heartbeat/", {"gpus": 2}))
            self.assertNotIn("Idempotency-Key", beat.headers)
        self.assertEqual(finish.path, "/api/v1/runs/r1/finish/")
        self.assertEqual(set(finish.json()), {"status", "ended_at"})  # the server measures
        self.assertFalse(run.heartbeat.alive)

    def test_a_heartbeat_that_cannot_be_sent_is_tried_again_and_a_409_ends_it(self) -> None:
        dropped = Answer(200, drop=True)
        gone = Answer(409, {"detail": "finished", "status": "completed"})
        script = Script(CREATED, dropped, dropped, gone)
        with loopback(script) as url:
            run = quick_desk(url).run(campaign=7, run_id="r1", gpus=1, heartbeat_seconds=0.05)
            assert run.heartbeat is not None
            deadline = time.monotonic() + 10
            while run.heartbeat.alive:
                self.assertLess(time.monotonic(), deadline, "the heartbeat did not end on 409")
                time.sleep(0.02)
        beats = [s for s in script.seen if s.path.endswith("/heartbeat/")]
        self.assertGreaterEqual(len(beats), 3)  # two lost, then the 409


class GpuCount(SimpleTestCase):
    def test_cuda_visible_devices_counts_and_hidden_or_absent_gpus_count_one(self) -> None:
        for visible, expected in (("0,1,2", 3), ("GPU-1a2b", 1), ("", 1), ("-1", 1)):
            with mock.patch.dict(os.environ, {"CUDA_VISIBLE_DEVICES": visible}):
                self.assertEqual(detect_gpus(), expected, visible)

    def test_nvidia_smi_lists_the_gpus_and_without_it_there_is_one(self) -> None:
        with tempfile.TemporaryDirectory() as bin_dir:
            smi = Path(bin_dir, "nvidia-smi")
            smi.write_text(
                "#!/bin/sh\necho 'GPU 0: NVIDIA A100 (UUID: GPU-1)'\n"
                "echo 'GPU 1: NVIDIA A100 (UUID: GPU-2)'\n"
            )
            smi.chmod(smi.stat().st_mode | stat.S_IEXEC)
            env = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
            with mock.patch.dict(os.environ, {**env, "PATH": bin_dir}, clear=True):
                self.assertEqual(detect_gpus(), 2)
            with mock.patch.dict(os.environ, {**env, "PATH": "/nonexistent"}, clear=True):
                self.assertEqual(detect_gpus(), 1)


def hundredths(seconds: float) -> Decimal:
    return (Decimal(repr(seconds)) / 3600).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


class OnALiveServer(LiveServerTestCase):
    def setUp(self) -> None:
        self.team = Team.objects.create(name="nlp")
        self.owner = make_user("olga", team=self.team, role="owner")
        # An hourly campaign (no lots): a run's cost is its GPU-hours × 36.00 USD.
        self.campaign = make_plannable(self.team, hourly_rate_per_gpu=Decimal("36.00"))
        commit_plan(campaign=self.campaign, acting_user=self.owner)
        Campaign.objects.filter(pk=self.campaign.pk).update(
            committed_at=timezone.now() - timedelta(hours=1)
        )
        self.item = self.campaign.items.get(name="baseline")
        _key, self.key = issue_ingest_key(campaign=self.campaign, acting_user=self.owner)

    def test_the_with_block_records_hours_within_two_seconds_of_the_wall_clock_and_a_cost(
        self,
    ) -> None:
        desk = quick_desk(self.live_server_url, self.key)
        began = time.time()
        with desk.run(
            campaign=self.campaign.pk, run_id="r1", variant=self.item.pk, gpus=2,
            heartbeat_seconds=1,
        ) as run:  # fmt: skip
            # 19 s: past the 18 s that half-up rounding makes 0.01 h.
            for step in range(19):
                run.log(step, loss=2.0 - step / 100)
                time.sleep(1)
        wall = time.time() - began
        stored = Run.objects.get(run_id="r1")
        assert stored.ended_at is not None
        took = (stored.ended_at - stored.started_at).total_seconds()
        self.assertLess(abs(took - wall), 2)
        self.assertEqual(stored.status, "completed")
        self.assertEqual(stored.measured_hours, hundredths(took))
        self.assertEqual(stored.observed_hours, Decimal("0.01"))
        cost = desk.get_run("r1")["cost_so_far"]
        # 0.01 h × 2 GPUs × 36.00 USD per GPU-hour.
        self.assertEqual((cost["amount"], cost["basis"]), ("0.72", "hourly"))

    @override_settings(RUN_SILENT_MULTIPLE=2, RUN_SILENT_MIN_SECONDS=0)
    def test_a_killed_loop_leaves_hours_ending_at_its_last_heartbeat(self) -> None:
        loop = textwrap.dedent(
            f"""
            import sys, time
            sys.path.insert(0, {str(ROOT)!r})
            from campaign_desk_client import CampaignDesk
            desk = CampaignDesk({self.live_server_url!r}, {self.key!r})
            with desk.run(campaign={self.campaign.pk}, run_id="killed", variant={self.item.pk},
                          gpus=1, heartbeat_seconds=0.5, flush_seconds=0.2) as run:
                print("running", flush=True)
                step = 0
                while True:
                    run.log(step, loss=1.0)
                    step += 1
                    time.sleep(0.1)
            """
        )
        child = subprocess.Popen([sys.executable, "-c", loop], stdout=subprocess.PIPE, text=True)
        self.addCleanup(child.wait, 10)
        self.addCleanup(child.kill)
        assert child.stdout is not None
        self.assertEqual(child.stdout.readline().strip(), "running")
        time.sleep(3)
        os.kill(child.pid, signal.SIGKILL)
        killed = timezone.now()
        child.wait(10)
        time.sleep(1)  # a request the loop sent before it died may still be answered
        last = Run.objects.get(run_id="killed").heartbeat_at
        assert last is not None
        # Declared every 0.5 s (sent as 1 s): silent after 2 s.
        self.assertEqual(run_lifecycle.end_silent_runs(now=killed + timedelta(seconds=5)), 1)
        run = Run.objects.get(run_id="killed")
        self.assertEqual((run.status, run.ended_silent), ("failed", True))
        self.assertEqual(run.ended_at, last)
        # Its last sign of life: within a heartbeat interval (and a request) of the kill.
        self.assertLess(abs((killed - last).total_seconds()), 1.5)
        self.assertEqual(run.measured_hours, hundredths((last - run.started_at).total_seconds()))
        self.assertEqual(run.observed_hours, run.measured_hours)

"""bench/cpu.py: the CPU a benchmark phase spent, by process, read from Linux's /proc."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import unittest

from bench import cpu


def burn(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


# A child that burns 0.3 s of CPU, then waits to be read.
BURN_THEN_SLEEP = (
    "import time\nt = time.process_time() + 0.3\n"
    "while time.process_time() < t: pass\ntime.sleep(30)"
)


@unittest.skipUnless(cpu.available(), "needs Linux's /proc")
class CpuAccounting(unittest.TestCase):
    def test_this_process_and_the_machine_are_charged_what_it_burned(self) -> None:
        before = cpu.snapshot([], [])
        burn(0.3)
        used = cpu.spent(before, cpu.snapshot([], []))
        self.assertGreaterEqual(used.client, 0.25)
        self.assertGreaterEqual(used.machine, used.client - 0.02)  # clock ticks round down
        self.assertEqual((used.server, used.database), (0.0, 0.0))

    def test_a_child_is_found_and_charged_from_zero_when_it_started_during_the_phase(self) -> None:
        before = cpu.snapshot([], [])
        child = subprocess.Popen(
            [
                sys.executable,
                "-c",
                BURN_THEN_SLEEP,
            ]
        )
        try:
            deadline = time.monotonic() + 10
            while cpu.process_seconds(child.pid) < 0.25 and time.monotonic() < deadline:
                time.sleep(0.05)
            self.assertIn(child.pid, cpu.children(os.getpid()))
            used = cpu.spent(before, cpu.snapshot(cpu.children(os.getpid()), []))
            self.assertGreaterEqual(used.server, 0.25)
        finally:
            child.kill()
            child.wait()
        self.assertEqual(cpu.process_seconds(child.pid), 0.0)  # gone: nothing to read

    def test_per_batch_figures_are_milliseconds_of_each_kind(self) -> None:
        use = cpu.CpuUse(client=0.2, server=1.0, database=0.5, machine=2.0)
        self.assertEqual(
            use.per(100),
            {"client_ms": 2.0, "server_ms": 10.0, "database_ms": 5.0, "machine_ms": 20.0},
        )
        self.assertEqual(use.per(0)["server_ms"], 1000.0)  # no batch: charged to one

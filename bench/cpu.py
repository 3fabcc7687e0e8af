"""CPU seconds a benchmark phase spent, by who spent them: this process (the bench's clients),
the server's worker processes, the bench database's PostgreSQL backends, and the whole machine.

Wall-clock throughput on a small machine says how fast, not why: the clients, the server and
PostgreSQL share the same cores. Read from Linux's /proc (clock ticks of user and system time
of each process, and /proc/stat for the machine); elsewhere every figure is 0.0 and
`available()` is False.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

_PROC = Path("/proc")
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def available() -> bool:
    return (_PROC / "stat").exists()


def process_seconds(pid: int) -> float:
    """User + system CPU of the process (all its threads); 0.0 once it is gone."""
    try:
        stat = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return 0.0
    fields = stat.rsplit(")", 1)[1].split()  # after "(comm)", which may hold spaces
    return (int(fields[11]) + int(fields[12])) / _TICK


def children(pid: int) -> list[int]:
    """The process's direct children (gunicorn's workers under its master)."""
    found: list[int] = []
    for task in (_PROC / str(pid) / "task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def machine_seconds() -> float:
    """CPU time every core spent busy since boot (user, nice, system, irq, softirq, steal)."""
    try:
        first = (_PROC / "stat").read_text().splitlines()[0].split()
    except OSError:
        return 0.0
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in first[1:9])
    return (user + nice + system + irq + softirq + steal) / _TICK


@dataclass(frozen=True)
class Snapshot:
    client: float
    server: dict[int, float]
    database: dict[int, float]
    machine: float


def snapshot(server_pids: Iterable[int], database_pids: Iterable[int]) -> Snapshot:
    return Snapshot(
        client=process_seconds(os.getpid()),
        server={p: process_seconds(p) for p in server_pids},
        database={p: process_seconds(p) for p in database_pids},
        machine=machine_seconds(),
    )


@dataclass(frozen=True)
class CpuUse:
    """CPU seconds of one phase. A process that started during the phase counts from 0 (a
    PostgreSQL backend a new server thread connected); one that ended is not seen after."""

    client: float
    server: float
    database: float
    machine: float

    def per(self, units: int) -> dict[str, float]:
        """Milliseconds of CPU per unit (a batch), by who spent them."""
        n = max(units, 1)
        return {
            "client_ms": 1000 * self.client / n,
            "server_ms": 1000 * self.server / n,
            "database_ms": 1000 * self.database / n,
            "machine_ms": 1000 * self.machine / n,
        }


def spent(before: Snapshot, after: Snapshot) -> CpuUse:
    def grown(a: dict[int, float], b: dict[int, float]) -> float:
        return sum(max(cpu - a.get(pid, 0.0), 0.0) for pid, cpu in b.items())

    return CpuUse(
        client=after.client - before.client,
        server=grown(before.server, after.server),
        database=grown(before.database, after.database),
        machine=after.machine - before.machine,
    )

"""gunicorn as docker-compose.yml runs it (its `web` command, bound to a loopback port) on the
test's own PostgreSQL database, for tests that need the real server between them and Django
(proxy headers, slow uploads). The server's output goes to build/<log name>."""

from __future__ import annotations

import http.client
import os
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import yaml

from bench.ingest.run import stop_gunicorn

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build"


# port → the gunicorn master's pid, for a test that kills one of its workers.
MASTERS: dict[int, int] = {}


def worker_pids(port: int) -> list[int]:
    """The pids of the workers of the gunicorn serving `port` (its master's children)."""
    master = MASTERS[port]
    children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    return [int(pid) for pid in children]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def compose_web_command(port: int, **options: str) -> list[str]:
    """docker-compose's web command on 127.0.0.1:`port`; `options` replace the values of
    gunicorn flags (workers="1" for --workers 1)."""
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    command = list(services["web"]["command"])
    command[command.index("--bind") + 1] = f"127.0.0.1:{port}"
    for name, value in options.items():
        command[command.index("--" + name.replace("_", "-")) + 1] = value
    gunicorn = Path(sys.executable).with_name("gunicorn")
    return [str(gunicorn), *command[1:]]


def health(port: int, timeout: float = 5) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", "/api/v1/health/")
        return conn.getresponse().status
    finally:
        conn.close()


def server_env(database_url: str, **extra: str) -> dict[str, str]:
    """A production-like environment (DEBUG off, a key of its own, plain HTTP on loopback) on
    `database_url`, with `extra` on top."""
    return {
        **os.environ,
        "DEBUG": "0",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "127.0.0.1",
        "SECURE_SSL_REDIRECT": "0",
        "DATABASE_URL": database_url,
        "LOG_LEVEL": "WARNING",
        **extra,
    }


@contextmanager
def compose_gunicorn(
    database_url: str, log_name: str, env: dict[str, str] | None = None, **options: str
) -> Iterator[int]:
    """Start it, wait until health answers, whatever it says (60 s at most), yield its port,
    stop it."""
    port = free_port()
    environment = server_env(database_url, **(env or {}))
    BUILD.mkdir(exist_ok=True)
    with (BUILD / log_name).open("wb") as log:
        proc = subprocess.Popen(
            compose_web_command(port, **options),
            cwd=ROOT,
            env=environment,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        MASTERS[port] = proc.pid
        try:
            _wait_for_health(proc, port, log_name)
            yield port
        finally:
            stop_gunicorn(proc)
            MASTERS.pop(port, None)


def _wait_for_health(proc: subprocess.Popen[bytes], port: int, log_name: str) -> None:
    deadline = time.monotonic() + 60
    while True:
        assert proc.poll() is None, f"gunicorn exited; see build/{log_name}"
        try:
            health(port, 10)  # any answer: 503 when a dependency is down on purpose
            return
        except OSError:
            pass
        assert time.monotonic() < deadline, f"gunicorn did not answer within 60 s ({log_name})"
        time.sleep(0.2)

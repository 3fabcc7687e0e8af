"""Benchmark: the production shape under slow clients (issue 32, item 2): 300 slow-header
connections and 200 trickling artifact uploads, and the health probe answering meanwhile.

Run from the project root:
``.venv/bin/python bench/slow_clients/run.py [--slow-headers 300] [--slow-uploads 200]``.

1. Creates a fresh PostgreSQL database (``cd_bench_slow``; dropped at the end unless
   ``--keep-db``), migrates it, and plans a committed campaign with ingest keys (four uploads
   a key: the per-key cap, so that the overall cap is what admits them).
2. Starts gunicorn as docker-compose.yml's web service runs it (its ``command``, bound to a
   loopback port, DEBUG off) and, for the shape "proxy", Caddy in front of it as compose runs
   it: the project's Caddyfile, its site served over plain HTTP on a loopback port (no
   certificate), its upstream the gunicorn port, admin endpoint off; a local caddy older than
   2.6.4 (Debian's 2.6.2) does not know ``request_buffers``, which is then dropped and said.
   The shape "direct" is gunicorn alone, as a client inside the compose network reaches it.
3. Opens ``--slow-headers`` connections that send a request line and then one header byte
   every ``--trickle`` seconds, never ending their headers (a connection the server closes is
   opened again at once: the attacker keeps the number up), and ``--slow-uploads`` PUTs of a
   1 MiB artifact at one byte every ``--trickle`` seconds; then probes ``/api/v1/health/``
   every half second for ``--seconds``, each probe on a new connection with a 10 s timeout.
4. Prints per shape: probes answered 200 and their latency (median, max), the slow-header
   connections the server cut (and the reconnections), the uploads' answers (429 refused at
   once past ARTIFACT_UPLOADS_TOTAL, 408 cut at ARTIFACT_UPLOAD_SECONDS, still trickling at
   the end); writes ``build/bench-slow-clients.json``.

Target: through the proxy every probe answers 200 within 5 s, at 300 slow-header connections
and 200 slow uploads. Loopback only; the servers are stopped and the database dropped however
the run ends. Without a local caddy the proxy shape is skipped and says so.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import secrets
import selectors
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))

from bench.databases import db_url, drop_database, recreate_database  # noqa: E402
from bench.ingest.run import free_port, stop_gunicorn  # noqa: E402

BUILD = ROOT / "build"
UPLOAD_BYTES = 1 << 20
# Caddy learnt reverse_proxy's request_buffers in 2.6.4 (it replaced buffer_requests).
REQUEST_BUFFERS_SINCE = (2, 6, 4)


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--admin-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    p.add_argument("--db", default="cd_bench_slow", help="database to (re)create")
    p.add_argument("--keep-db", action="store_true", help="keep the database afterwards")
    p.add_argument("--redis-url", default="", help="REDIS_URL for the upload slots (optional)")
    p.add_argument("--slow-headers", type=int, default=300)
    p.add_argument("--slow-uploads", type=int, default=200)
    p.add_argument("--seconds", type=float, default=30.0, help="how long the probes run")
    p.add_argument("--trickle", type=float, default=2.0, help="seconds between slow bytes")
    p.add_argument("--shapes", default="direct,proxy", help="direct (gunicorn), proxy (Caddy)")
    p.add_argument("--output", type=Path, default=BUILD / "bench-slow-clients.json")
    return p.parse_args()


# --- Data set-up (Django in this process, on the bench database) --------------------------


def set_up(url: str, keys: int) -> tuple[int, int, list[str]]:
    """A committed campaign, its baseline item's id and `keys` raw ingest keys."""
    os.environ["DATABASE_URL"] = url
    os.environ["LOG_LEVEL"] = "WARNING"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DEBUG", "1")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from campaigns.models import Campaign, PlannedItem, StopRule, Team
    from campaigns.services.keys import issue_ingest_key
    from campaigns.services.plans import commit_plan

    call_command("migrate", verbosity=0, interactive=False)
    team = Team.objects.create(name="bench")
    campaign = Campaign.objects.create(
        team=team,
        title="Slow clients",
        question="Does health answer under slow clients?",
        corpus_name="bench",
        corpus_revision="0",
    )
    item = PlannedItem.objects.create(
        campaign=campaign, name="baseline", role="baseline", tier="mandatory"
    )
    StopRule.objects.create(campaign=campaign, kind="non_finite_loss", metric="loss")
    commit_plan(campaign=campaign)
    raws = [issue_ingest_key(campaign=campaign, name=f"bench-{n}")[1] for n in range(keys)]
    connection.close()
    return campaign.pk, item.pk, raws


# --- The servers ---------------------------------------------------------------------------


def compose_web_command(port: int) -> list[str]:
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    command = list(services["web"]["command"])
    command[command.index("--bind") + 1] = f"127.0.0.1:{port}"
    return [str(Path(sys.executable).with_name("gunicorn")), *command[1:]]


@contextlib.contextmanager
def gunicorn(url: str, redis_url: str, media: Path) -> Iterator[int]:
    port = free_port()
    env = {
        **os.environ,
        "DEBUG": "0",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "127.0.0.1",
        "SECURE_SSL_REDIRECT": "0",
        "DATABASE_URL": url,
        "REDIS_URL": redis_url,
        "CACHE_KEY_PREFIX": f"bench-slow-{time.monotonic_ns()}",
        "CELERY_BROKER_URL": "",
        "MEDIA_ROOT": str(media),
        "LOG_LEVEL": "WARNING",
        "DB_POOL_MAX_SIZE": "20",  # compose's web service
    }
    BUILD.mkdir(exist_ok=True)
    with (BUILD / "bench-slow-clients-gunicorn.log").open("ab") as log:
        proc = subprocess.Popen(
            compose_web_command(port), cwd=ROOT, env=env, stdout=log,
            stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        try:
            wait_for_health(port, proc)
            yield port
        finally:
            stop_gunicorn(proc)


def caddy_version(caddy: str) -> tuple[int, ...]:
    out = subprocess.run([caddy, "version"], capture_output=True, text=True).stdout
    return tuple(int(p) for p in out.strip().split()[0].lstrip("v").split("-")[0].split("."))


def local_caddyfile(port: int, upstream: int, version: tuple[int, ...]) -> tuple[str, list[str]]:
    """The project's Caddyfile as compose runs it, on loopback over plain HTTP; what changed."""
    text = (ROOT / "Caddyfile").read_text()
    changes = ["site over plain HTTP on loopback", "admin endpoint off"]
    text = text.replace("{\n\tservers", "{\n\tadmin off\n\tservers", 1)
    text = text.replace("{$SITE_ADDRESS:localhost} {", f"http://127.0.0.1:{port} {{")
    text = text.replace("\ttls internal\n", "").replace("web:8000", f"127.0.0.1:{upstream}")
    if version < REQUEST_BUFFERS_SINCE:
        text = "\n".join(line for line in text.splitlines() if "request_buffers" not in line)
        changes.append(f"request_buffers dropped (caddy {'.'.join(map(str, version))})")
    return text, changes


@contextlib.contextmanager
def caddy_in_front(caddy: str, upstream: int) -> Iterator[tuple[int, list[str]]]:
    port = free_port()
    text, changes = local_caddyfile(port, upstream, caddy_version(caddy))
    with tempfile.TemporaryDirectory() as home:
        path = Path(home) / "Caddyfile"
        path.write_text(text)
        env = {**os.environ, "HOME": home, "XDG_DATA_HOME": home, "XDG_CONFIG_HOME": home}
        with (BUILD / "bench-slow-clients-caddy.log").open("ab") as log:
            proc = subprocess.Popen(
                [caddy, "run", "--config", str(path), "--adapter", "caddyfile"],
                env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
            try:
                wait_for_health(port, proc)
                yield port, changes
            finally:
                proc.terminate()
                proc.wait(10)


def wait_for_health(port: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while probe(port, 2)[0] != 200:
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"no health answer on port {port}; see build/bench-slow-*.log")
        time.sleep(0.2)


def probe(port: int, timeout: float = 10) -> tuple[int, float]:
    started = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", "/api/v1/health/")
        status = conn.getresponse().status
    except (OSError, http.client.HTTPException):
        status = 0
    finally:
        conn.close()
    return status, time.monotonic() - started


def make_run(port: int, campaign: int, item: int, key: str) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    body = json.dumps({"run_id": "r1", "kind": "full", "config": {}, "variant": item})
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    conn.request("POST", f"/api/v1/campaigns/{campaign}/runs/", body, headers)
    status = conn.getresponse().status
    conn.close()
    if status not in (200, 201, 409):
        raise RuntimeError(f"creating run r1 answered {status}")


# --- The slow clients ----------------------------------------------------------------------


@dataclass
class SlowHeaders:
    """Connections that never finish their headers, kept at `count` open."""

    port: int
    count: int
    trickle: float
    opened: int = 0
    cut: int = 0
    stop: threading.Event = field(default_factory=threading.Event)

    def _open(self, sel: selectors.BaseSelector) -> None:
        try:
            sock = socket.create_connection(("127.0.0.1", self.port), timeout=5)
            sock.sendall(b"GET /api/v1/health/ HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        except OSError:
            return
        sock.setblocking(False)
        sel.register(sock, selectors.EVENT_READ)
        self.opened += 1

    def run(self) -> None:
        sel = selectors.DefaultSelector()
        next_byte = time.monotonic() + self.trickle
        while not self.stop.is_set():
            while len(sel.get_map()) < self.count and not self.stop.is_set():
                self._open(sel)
            for key, _ in sel.select(0.2):
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                with contextlib.suppress(OSError):
                    sock.recv(4096)  # a refusal or the end: either way the server let go
                sel.unregister(sock)
                sock.close()
                self.cut += 1
            if time.monotonic() >= next_byte:
                next_byte += self.trickle
                for key in list(sel.get_map().values()):
                    with contextlib.suppress(OSError):
                        key.fileobj.send(b"x")  # type: ignore[union-attr]
        for key in list(sel.get_map().values()):
            key.fileobj.close()  # type: ignore[union-attr]


def slow_upload(port: int, path: str, key: str, trickle: float, stop: threading.Event,
                answers: list[tuple[int, float]]) -> None:  # fmt: skip
    """PUT a 1 MiB artifact at one byte every `trickle` s; its answer and when it came."""
    started = time.monotonic()
    try:
        sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    except OSError:
        answers.append((-1, 0.0))
        return
    try:
        head = (
            f"PUT {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {key}\r\n"
            f"Content-Type: application/octet-stream\r\nContent-Length: {UPLOAD_BYTES}\r\n\r\n"
        )
        sock.sendall(head.encode())
        sock.settimeout(trickle)
        while not stop.is_set():
            try:
                answer = sock.recv(64)
                status = int(answer.split()[1]) if answer else -1
                answers.append((status, time.monotonic() - started))
                return
            except TimeoutError:
                pass
            except (OSError, ValueError, IndexError):
                answers.append((-1, time.monotonic() - started))
                return
            with contextlib.suppress(OSError):
                sock.sendall(b"x")
        answers.append((0, time.monotonic() - started))  # still trickling at the end
    finally:
        sock.close()


@dataclass
class ShapeResult:
    shape: str
    slow_headers: int
    slow_uploads: int
    seconds: float
    probes: int
    probes_ok: int
    probe_median_s: float
    probe_max_s: float
    header_connections_opened: int
    header_connections_cut: int
    uploads: dict[str, int]
    notes: list[str]


def attack(port: int, args: argparse.Namespace, campaign: int, keys: list[str]) -> dict[str, Any]:
    """Slow clients on `port`, probes meanwhile; their figures."""
    slow = SlowHeaders(port, args.slow_headers, args.trickle)
    stop = threading.Event()
    answers: list[tuple[int, float]] = []
    threads = [threading.Thread(target=slow.run, daemon=True)]
    base = f"/mlflow/api/2.0/mlflow-artifacts/artifacts/{campaign}/r1/artifacts"
    for n in range(args.slow_uploads):
        threads.append(threading.Thread(
            target=slow_upload,
            args=(port, f"{base}/slow-{n}.bin", keys[n // 4], args.trickle, stop, answers),
            daemon=True,
        ))  # fmt: skip
    for thread in threads:
        thread.start()
    time.sleep(3)  # every slow client connected and sending
    probes = []
    finish = time.monotonic() + args.seconds
    while time.monotonic() < finish:
        probes.append(probe(port))
        time.sleep(0.5)
    slow.stop.set()
    stop.set()
    for thread in threads:
        thread.join(args.trickle + 15)
    latencies = [s for status, s in probes if status == 200] or [float("nan")]
    names = {0: "still trickling", -1: "connection failed or closed", 429: "429", 408: "408"}
    return {
        "probes": len(probes),
        "probes_ok": sum(status == 200 for status, _ in probes),
        "probe_median_s": round(statistics.median(latencies), 3),
        "probe_max_s": round(max(latencies), 3),
        "header_connections_opened": slow.opened,
        "header_connections_cut": slow.cut,
        "uploads": dict(Counter(names.get(status, str(status)) for status, _ in answers)),
    }


def measure(shape: str, url: str, args: argparse.Namespace, fx: tuple[int, int, list[str]],
            media: Path) -> ShapeResult | None:  # fmt: skip
    campaign, item, keys = fx
    notes: list[str] = []
    caddy = shutil.which("caddy")
    if shape == "proxy" and caddy is None:
        print("proxy: skipped, caddy is not installed here")
        return None
    with gunicorn(url, args.redis_url, media) as upstream:
        make_run(upstream, campaign, item, keys[0])
        with contextlib.ExitStack() as stack:
            port = upstream
            if shape == "proxy" and caddy is not None:
                port, notes = stack.enter_context(caddy_in_front(caddy, upstream))
            figures = attack(port, args, campaign, keys)
    return ShapeResult(shape, args.slow_headers, args.slow_uploads, args.seconds, notes=notes,
                       **figures)  # fmt: skip


def main() -> int:
    args = parse_args()
    url = db_url(args.admin_url, args.db)
    recreate_database(args.admin_url, args.db)
    results: list[ShapeResult] = []
    try:
        fx = set_up(url, keys=max(1, (args.slow_uploads + 3) // 4))
        with tempfile.TemporaryDirectory() as media:
            for shape in args.shapes.split(","):
                found = measure(shape, url, args, fx, Path(media))
                if found is not None:
                    results.append(found)
    finally:
        if not args.keep_db:
            drop_database(args.admin_url, args.db)
    load = os.getloadavg()
    print(f"slow clients: {args.slow_headers} slow-header connections, {args.slow_uploads} "
          f"slow uploads, probes for {args.seconds:.0f} s; load average {load[0]:.1f}")  # fmt: skip
    print(f"{'shape':<8}{'probes 200':>12}{'median s':>10}{'max s':>8}{'cut/opened':>12}  uploads")
    for r in results:
        print(f"{r.shape:<8}{r.probes_ok:>6}/{r.probes:<5}{r.probe_median_s:>10}"
              f"{r.probe_max_s:>8}{r.header_connections_cut:>6}/{r.header_connections_opened:<5}"
              f"  {r.uploads}{'  (' + '; '.join(r.notes) + ')' if r.notes else ''}")  # fmt: skip
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps([asdict(r) for r in results], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The same MLflow client script (bench/mlflow/client.py) against Campaign Desk's MLflow facade
and, when an MLflow server is installed, against MLflow's own tracking server, both on the same
PostgreSQL; prints both and the ratios. See bench/README.md.

1. Campaign Desk: recreates `cd_bench_mlflow`, migrates, plans a committed campaign with a
   non-finite-loss rule and an ingest key bound to its baseline, and starts gunicorn as
   docker-compose.yml does (DEBUG=0).
2. MLflow: recreates `mlflow_bench` and starts `mlflow server --backend-store-uri
   postgresql+psycopg2://…/mlflow_bench` from `--mlflow` (an executable in another virtualenv:
   the full `mlflow` package is not a dependency of this project).
3. A null server that answers every call at once and stores nothing: the client's own cost.
4. `--rounds` interleaved rounds of the client script against each (so a burst of load from
   elsewhere hits all of them); each figure's median round and best round are reported.

The client script runs with this project's interpreter (mlflow-skinny, a dev dependency), so
every server is timed by the same client code; only MLFLOW_TRACKING_URI (and the token) differ.
Databases are dropped at the end unless `--keep-db`. Results: build/bench-mlflow.json.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.databases import db_url, drop_database, recreate_database  # noqa: E402
from bench.mlflow.statements import count_statements  # noqa: E402


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--admin-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    p.add_argument("--db", default="cd_bench_mlflow")
    p.add_argument("--mlflow-db", default="mlflow_bench")
    p.add_argument(
        "--mlflow",
        default=shutil.which("mlflow") or "/tmp/mlflow-venv/bin/mlflow",
        help="the `mlflow` executable of a virtualenv with the full mlflow package",
    )
    p.add_argument(
        "--workers", type=int, default=3, help="server worker processes (both; compose runs 3)"
    )
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--batches", type=int, default=10)
    p.add_argument("--rounds", type=int, default=5, help="interleaved rounds; medians kept")
    p.add_argument(
        "--async-commit",
        action="store_true",
        help="also measure Campaign Desk with MLFLOW_ASYNC_COMMIT=1 (its own database), "
        "interleaved with the others",
    )
    p.add_argument("--keep-db", action="store_true")
    p.add_argument("--output", default=str(ROOT / "build" / "bench-mlflow.json"))
    return p.parse_args()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


WAIT_SECONDS = 300  # MLflow 3.18's server takes over a minute to start on a loaded machine


def wait_for(proc: subprocess.Popen[bytes], port: int, path: str, log: Path) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode}; see {log}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", path)
            if conn.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.3)
    stop(proc)
    raise RuntimeError(f"the server did not answer {path} within {WAIT_SECONDS} s; see {log}")


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def set_up_desk(url: str) -> tuple[int, str]:
    os.environ["DATABASE_URL"] = url
    os.environ["LOG_LEVEL"] = "WARNING"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    # A bench measures a local checkout as runserver serves it: DEBUG on (static files from the
    # apps, no redirect to HTTPS), as it was before DEBUG became off by default.
    os.environ.setdefault("DEBUG", "1")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    # A second server's database (--async-commit): this process's connection moves to it.
    connection.close()
    connection.settings_dict["NAME"] = url.rsplit("/", 1)[1]

    from campaigns.models import Campaign, PlannedItem, StopRule, Team
    from campaigns.services.keys import issue_ingest_key
    from campaigns.services.plans import commit_plan

    call_command("migrate", verbosity=0, interactive=False)
    team = Team.objects.create(name="bench")
    campaign = Campaign.objects.create(
        team=team,
        title="MLflow benchmark",
        question="How fast does an MLflow loop log?",
        corpus_name="bench",
        corpus_revision="0",
        window_hours=Decimal("72"),
    )
    item = PlannedItem.objects.create(
        campaign=campaign, name="baseline", role="baseline", tier="mandatory"
    )
    StopRule.objects.create(campaign=campaign, kind="non_finite_loss", metric="loss")
    commit_plan(campaign=campaign)
    _, raw = issue_ingest_key(campaign=campaign, name="bench", item=item)
    connection.close()
    return campaign.pk, raw


def run_client(env: dict[str, str], args: argparse.Namespace, run_name: str) -> dict[str, Any]:
    command = [
        sys.executable,
        str(ROOT / "bench" / "mlflow" / "client.py"),
        "--steps",
        str(args.steps),
        "--batches",
        str(args.batches),
        "--run-name",
        run_name,
    ]
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    out = subprocess.run(
        command, env={**clean, **env}, capture_output=True, text=True, check=False, timeout=1800
    )
    if out.returncode != 0:
        raise RuntimeError(f"the client failed:\n{out.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def start_desk(
    args: argparse.Namespace, build: Path, *, db: str = "", extra: dict[str, str] | None = None
) -> tuple[subprocess.Popen[bytes], dict[str, str]]:
    """gunicorn serving Campaign Desk on a fresh database (`db`, else --db) with `extra`
    settings in its environment; returns it and the client's env."""
    db = db or args.db
    url = db_url(args.admin_url, db)
    recreate_database(args.admin_url, db)
    _campaign, key = set_up_desk(url)
    port = free_port()
    log = build / f"bench-mlflow-desk-{db}.log"
    env = {
        **os.environ,
        "DEBUG": "0",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "127.0.0.1",
        "SECURE_SSL_REDIRECT": "0",
        "DATABASE_URL": url,
        "LOG_LEVEL": "WARNING",
        "MEDIA_ROOT": str(build / "bench-mlflow-media"),
        # docker-compose.yml's web: each worker's connections from a pool of at most 20.
        "DB_POOL_MAX_SIZE": "20",
        **(extra or {}),
    }
    env.pop("CELERY_BROKER_URL", None)
    gunicorn = Path(sys.executable).with_name("gunicorn")
    # docker-compose.yml's web command, bound to loopback (its --workers is 3).
    command = [
        str(gunicorn),
        "config.wsgi:application",
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        str(args.workers),
        *("--worker-class", "gthread", "--threads", "32", "--worker-connections", "32"),
        *("--timeout", "120", "--graceful-timeout", "30", "--keep-alive", "5"),
        *("--access-logfile", "-"),
    ]
    proc = subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    wait_for(proc, port, "/api/v1/health/", log)
    client = {
        "MLFLOW_TRACKING_URI": f"http://127.0.0.1:{port}/mlflow",
        "MLFLOW_TRACKING_TOKEN": key,
    }
    return proc, client


def start_mlflow(
    args: argparse.Namespace, build: Path
) -> tuple[subprocess.Popen[bytes], dict[str, str]] | None:
    """MLflow's tracking server on its own fresh database on the same PostgreSQL."""
    if not Path(args.mlflow).exists():
        print(f"No MLflow server at {args.mlflow}: measured Campaign Desk only.")
        return None
    recreate_database(args.admin_url, args.mlflow_db, schema=False)
    store = db_url(args.admin_url, args.mlflow_db).replace("postgres://", "postgresql+psycopg2://")
    port = free_port()
    log = build / "bench-mlflow-server.log"
    command = [
        args.mlflow,
        "server",
        "--backend-store-uri",
        store,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--workers",
        str(args.workers),
        "--artifacts-destination",
        str(build / "bench-mlflow-server-artifacts"),
    ]
    proc = subprocess.Popen(
        command,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
        # Its job runner (background jobs of its UI) serves no tracking call; off, it starts
        # in seconds instead of a minute.
        env={**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"},
    )
    wait_for(proc, port, "/health", log)
    return proc, {"MLFLOW_TRACKING_URI": f"http://127.0.0.1:{port}"}


class NullServer:
    """Answers every call the client script makes instantly, storing nothing: what the client
    alone costs (serialising, HTTP on loopback), to subtract from both servers' figures."""

    def __init__(self) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        run = {
            "info": {
                "run_id": "null",
                "run_uuid": "null",
                "run_name": "null",
                "experiment_id": "1",
                "status": "RUNNING",
                "start_time": 1,
                "artifact_uri": "mlflow-artifacts:/1/null/artifacts",
                "lifecycle_stage": "active",
            },
            "data": {},
        }
        experiment = {
            "experiment_id": "1",
            "name": "bench",
            "lifecycle_stage": "active",
            "artifact_location": "mlflow-artifacts:/1",
        }

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                path = self.path.split("?")[0]
                body: dict[str, Any] = {}
                if path.endswith("/experiments/get-by-name"):
                    body = {"experiment": experiment}
                elif path.endswith(("/runs/create", "/runs/get")):
                    body = {"run": run}
                elif path.endswith("/runs/update"):
                    body = {"run_info": {**run["info"], "status": "FINISHED"}}
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _answer

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]

    def __enter__(self) -> NullServer:
        import threading

        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


def bench_null(args: argparse.Namespace) -> dict[str, Any]:
    with NullServer() as null:
        return run_client({"MLFLOW_TRACKING_URI": f"http://127.0.0.1:{null.port}"}, args, "null")


def best(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Each figure's best round: the machine is shared, and contention only ever adds time."""
    return {k: min(r[k] for r in results) for k in results[0]}


def median(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Each figure's median round (of each round's median call): what a shared machine gives
    as a rule, where the best round is what it gives when quiet."""
    return {k: statistics.median(r[k] for r in results) for k in results[0]}


ASYNC = "Desk async"

CALLS = {
    "log_metric": "sync_median_ms",
    "log_param": "param_median_ms",
    "set_tag": "tag_median_ms",
    "log_batch": "batch_median_ms",
}


def report(title: str, figures: dict[str, dict[str, Any]], args: argparse.Namespace) -> None:
    print(
        f"{title}: MLflow client, {args.steps} synchronous calls of each kind, {args.batches} "
        f"log_batch of 1,000 metrics; server --workers {args.workers}, PostgreSQL, loopback; "
        f"{args.rounds} interleaved rounds (median call of each round, ms)"
    )
    print(f"{'server':<16}" + "".join(f"{call:>12}" for call in CALLS))
    for name, r in figures.items():
        print(f"{name:<16}" + "".join(f"{r[key]:>12.2f}" for key in CALLS.values()))
    mlf = figures.get("MLflow server")
    for name in ("Campaign Desk", ASYNC):
        desk = figures.get(name)
        if mlf and desk:
            ratios = ", ".join(f"{c} {mlf[key] / desk[key]:.1f}x" for c, key in CALLS.items())
            print(f"{name} against MLflow's server, end to end: {ratios} (targets 2x, 3x)")


def report_spread(rounds: dict[str, list[dict[str, Any]]]) -> None:
    """Each round's ratio, so the spread a shared machine gives is seen, not only a median."""
    if "MLflow server" not in rounds:
        return
    for name in ("Campaign Desk", ASYNC):
        for call, key in CALLS.items():
            ratios = [
                theirs[key] / ours[key]
                for ours, theirs in zip(rounds.get(name, []), rounds["MLflow server"], strict=False)
            ]
            if ratios:
                print(f"{name}, {call:<11} per round: " + " ".join(f"{r:.1f}x" for r in ratios))


def main() -> None:
    args = parse_args()
    build = ROOT / "build"
    build.mkdir(exist_ok=True)
    servers: dict[str, tuple[subprocess.Popen[bytes], dict[str, str]]] = {}
    rounds: dict[str, list[dict[str, Any]]] = {"client alone": [], "Campaign Desk": []}
    statements: dict[str, int] = {}
    try:
        servers["Campaign Desk"] = start_desk(args, build)
        statements = count_statements(servers["Campaign Desk"][1]["MLFLOW_TRACKING_TOKEN"], "0")
        if args.async_commit:
            servers[ASYNC] = start_desk(
                args, build, db=f"{args.db}_async", extra={"MLFLOW_ASYNC_COMMIT": "1"}
            )
            rounds[ASYNC] = []
        theirs = start_mlflow(args, build)
        if theirs is not None:
            servers["MLflow server"] = theirs
            rounds["MLflow server"] = []
        # Interleaved rounds, so a burst of load elsewhere on the machine hits both servers.
        for n in range(args.rounds):
            rounds["client alone"].append(bench_null(args))
            for name, (_proc, env) in servers.items():
                rounds[name].append(run_client(env, args, f"bench-{n}"))
    finally:
        for proc, _env in servers.values():
            stop(proc)
        if not args.keep_db:
            drop_database(args.admin_url, args.db)
            if args.async_commit:
                drop_database(args.admin_url, f"{args.db}_async")
            if "MLflow server" in rounds:
                drop_database(args.admin_url, args.mlflow_db)
    medians = {name: median(results) for name, results in rounds.items()}
    figures = {name: best(results) for name, results in rounds.items()}
    report("Median round", medians, args)
    print()
    report("Best round", figures, args)
    report_spread(rounds)
    print(
        "SQL statements per call on Campaign Desk (PostgreSQL): "
        + ", ".join(f"{call} {n}" for call, n in statements.items())
    )
    Path(args.output).write_text(
        json.dumps(
            {"median": medians, "best": figures, "rounds": rounds, "statements": statements},
            indent=2,
        )
    )


if __name__ == "__main__":
    main()

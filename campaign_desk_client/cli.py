"""The ``cdesk`` command line (docs/client.md): ``login``, ``runs``, ``stop RUN``, ``report
CAMPAIGN`` and ``estimate SPEC``. Output is one record per line, fields separated by tabs (``cut``
and ``awk`` friendly); ``--json`` prints the server's JSON instead. Exit status: 0 done, 1 the
server refused (its words on stderr), 2 bad usage.

The server and a user's API token (``cdt_…``) come from ``--url``/``--token``, else
``CAMPAIGN_DESK_URL``/``CAMPAIGN_DESK_KEY``, else what ``cdesk login`` saved in
``$XDG_CONFIG_HOME/cdesk/config.json`` (``~/.config``; readable by its owner only).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.parse
from pathlib import Path
from typing import Any

from . import __version__
from .client import CampaignDesk
from .errors import ApiError


def config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "cdesk" / "config.json"


def _saved() -> dict[str, str]:
    try:
        found = json.loads(config_path().read_text())
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _desk(args: argparse.Namespace) -> CampaignDesk:
    saved = _saved()
    url = args.url or os.environ.get("CAMPAIGN_DESK_URL") or saved.get("url")
    token = args.token or os.environ.get("CAMPAIGN_DESK_KEY") or saved.get("token")
    if not url or not token:
        raise SystemExit("cdesk: no server or token: run `cdesk login` or set CAMPAIGN_DESK_URL")
    return CampaignDesk(url, token, max_retries=2)


def _print(args: argparse.Namespace, body: Any, rows: list[list[Any]]) -> None:
    if args.json:
        print(json.dumps(body, indent=2))
        return
    for row in rows:
        print("\t".join("" if v is None else str(v) for v in row))


def _results(body: Any) -> list[dict[str, Any]]:
    found = body.get("results", []) if isinstance(body, dict) else body
    return [row for row in found if isinstance(row, dict)] if isinstance(found, list) else []


def cmd_login(args: argparse.Namespace) -> None:
    token = args.token or input("API token (cdt_…): ").strip()
    desk = CampaignDesk(args.url, token, max_retries=2)
    desk.get("/campaigns/?limit=1")  # the token works, or ApiError says why
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        json.dump({"url": args.url, "token": token}, out)
    print(f"logged in to {desk.root}; saved in {path}")


def cmd_runs(args: argparse.Namespace) -> None:
    desk = _desk(args)
    ids = [args.campaign] if args.campaign else [c["id"] for c in _results(desk.get("/campaigns/"))]
    runs = [
        {**row, "campaign": campaign}
        for campaign in ids
        for row in _results(desk.get(f"/campaigns/{int(campaign)}/runs/?limit=1000"))
    ]
    rows = [[r["campaign"], r.get("run_id"), r.get("kind"), r.get("status")] for r in runs]
    _print(args, runs, rows)


def cmd_stop(args: argparse.Namespace) -> None:
    body: dict[str, Any] = {"reason": args.reason}
    if args.rule is not None:
        body["rule"] = args.rule
    answer = _desk(args).post(f"/runs/{urllib.parse.quote(args.run, safe='')}/stop/", body)
    _print(args, answer, [[answer.get("run_id"), answer.get("status")]])


def cmd_report(args: argparse.Namespace) -> None:
    desk = _desk(args)
    started = desk.post(f"/campaigns/{int(args.campaign)}/reports/", {})
    deadline = time.monotonic() + args.wait
    report = started
    while report.get("status") not in ("ready", "failed") and time.monotonic() < deadline:
        time.sleep(0.5)
        report = desk.get(f"/reports/{int(started['id'])}/")
    if report.get("status") == "ready" and args.format:
        body = desk.request("GET", f"/reports/{int(started['id'])}/{args.format}/").body
        print(json.dumps(body, indent=2) if args.format == "json" else body)
        return
    _print(args, report, [[report.get("id"), report.get("status")]])
    if report.get("status") == "failed":
        raise SystemExit(1)


def cmd_estimate(args: argparse.Namespace) -> None:
    spec = json.loads(Path(args.spec).read_text())
    answer = _desk(args).post("/estimates/preview/", spec)
    memory = (answer.get("memory_per_device_bytes") or {}).get("total")
    cost = answer.get("cost") or {}
    rows = [
        ["gpu_hours", answer.get("gpu_hours")],
        ["wall_hours", answer.get("wall_hours")],
        ["memory_per_device_bytes", memory],
        ["fits_in_memory", answer.get("fits_in_memory")],
        ["cost", f"{cost.get('amount')} {cost.get('currency')}" if cost else None],
        ["time_source", answer.get("time_source")],
    ]
    _print(args, answer, rows)


def _common(default: object) -> argparse.ArgumentParser:
    """--url, --token and --json, before or after the command."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--url", default=default, help="the server (CAMPAIGN_DESK_URL, login)")
    common.add_argument("--token", default=default, help="a user's API token (CAMPAIGN_DESK_KEY)")
    common.add_argument(
        "--json", action="store_true", default=default, help="print the server's JSON"
    )
    return common


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="cdesk",
        description="Campaign Desk from the shell: tab-separated output, --json.",
        parents=[_common(None)],
    )
    p.add_argument("--version", action="version", version=f"cdesk {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    common = [_common(argparse.SUPPRESS)]
    login = sub.add_parser(
        "login", parents=common, help="check a token against the server and save both"
    )
    login.set_defaults(handler=cmd_login)
    runs = sub.add_parser("runs", parents=common, help="runs: campaign, run id, kind, status")
    runs.add_argument("--campaign", type=int, help="one campaign's runs (default: all)")
    runs.set_defaults(handler=cmd_runs)
    stop = sub.add_parser("stop", parents=common, help="stop a run with a reason")
    stop.add_argument("run", metavar="RUN", help="the run id")
    stop.add_argument("--reason", required=True, help="why (kept with the run)")
    stop.add_argument("--rule", type=int, help="the stop rule applied (its grace applies)")
    stop.set_defaults(handler=cmd_stop)
    report = sub.add_parser("report", parents=common, help="generate a closing report")
    report.add_argument("campaign", metavar="CAMPAIGN", type=int, help="the campaign's id")
    report.add_argument("--wait", type=float, default=60, help="seconds to wait for it (60)")
    report.add_argument("--format", choices=("markdown", "html", "json"), help="print it")
    report.set_defaults(handler=cmd_report)
    estimate = sub.add_parser(
        "estimate", parents=common, help="estimate hours, memory and cost from a spec"
    )
    estimate.add_argument("spec", metavar="SPEC", help="a JSON file: the preview's body")
    estimate.set_defaults(handler=cmd_estimate)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.command == "login" and not args.url:
        parser().error("login needs --url")
    try:
        args.handler(args)
    except ApiError as exc:
        print(f"cdesk: {exc}", file=sys.stderr)
        return 1
    return 0

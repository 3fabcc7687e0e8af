"""The export benchmark's smoke mode runs (tiny sizes) and its sums match the ledger."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.mark.postgres
def test_the_export_benchmark_smoke_mode(tmp_path: Path) -> None:
    db = settings.DATABASES["default"]
    auth = db.get("USER") or "postgres"
    if db.get("PASSWORD"):
        auth += f":{db['PASSWORD']}"
    admin_url = (
        f"postgres://{auth}@{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/postgres"
    )
    out = tmp_path / "bench.json"
    done = subprocess.run(
        [sys.executable, "bench/exports/run.py", "--smoke", "--admin-url", admin_url,
         "--db", f"{db['NAME']}_bench_exports", "--output", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(out.read_text())
    assert result["sums_match"]
    assert [r["rows"] for r in result["results"]] == [300, 300]

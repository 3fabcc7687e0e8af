"""The order `make test` hands files to its xdist workers names files that exist: a renamed
or split slow file would otherwise drop silently to the end of the run (conftest.py)."""

from __future__ import annotations

from pathlib import Path

from conftest import LONGEST_FIRST

ROOT = Path(__file__).resolve().parent.parent


def test_every_file_handed_out_first_exists_once() -> None:
    missing = [path for path in LONGEST_FIRST if not (ROOT / path).is_file()]
    assert missing == []
    assert len(set(LONGEST_FIRST)) == len(LONGEST_FIRST)

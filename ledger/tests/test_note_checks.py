"""Checks per deliverable kind (issue 18, item 4; docs/domain.md §14.2): an error analysis is a
note a person reads: no identifiers to match, nothing to reload; its files are still checked."""

from __future__ import annotations

from ledger.domain.deliverable_checks import FileEntry, check_deliverable

GOOD = FileEntry(path="reports/errors.md", size_bytes=2048, sha256="a" * 64)


def check(kind: str, **extra: object) -> tuple[str, ...]:
    args: dict[str, object] = {
        "files": [GOOD],
        "expected_ids_ok": None,
        "reload_verified": None,
        "base_revision": None,
        "run_stopped": False,
        "run_id": None,
    }
    args.update(extra)
    return check_deliverable(kind, **args)  # type: ignore[arg-type]


def test_an_error_analysis_note_needs_no_reload_or_identifiers() -> None:
    assert check("error_analysis") == ()


def test_a_note_still_needs_its_files() -> None:
    assert check("error_analysis", files=[]) != ()
    empty = FileEntry(path="reports/errors.md", size_bytes=0, sha256="a" * 64)
    assert any("empty" in r for r in check("error_analysis", files=[empty]))


def test_predictions_still_need_reload_and_identifiers() -> None:
    reasons = check("predictions")
    assert any("reload not verified" in r for r in reasons)
    assert any("identifiers" in r or "ids" in r for r in reasons)

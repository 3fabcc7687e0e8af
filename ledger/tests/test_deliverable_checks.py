"""Deliverable server-side checks: pure tests, no database."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ledger.domain.deliverable_checks import (
    REASON_ADAPTER_BASE,
    REASON_EXPECTED_IDS_BAD,
    REASON_EXPECTED_IDS_UNCHECKED,
    REASON_NO_FILES,
    REASON_RELOAD_FAILED,
    REASON_RELOAD_UNCHECKED,
    FileEntry,
    check_deliverable,
    temporary_directory_of,
)

GOOD_SHA = "a" * 64
PREDICTIONS = FileEntry("outputs/predictions.jsonl", 2048, GOOD_SHA)
MANIFEST = FileEntry("outputs/manifest.json", 512, "B" * 64)


def check(
    files: list[FileEntry],
    *,
    kind: str = "predictions",
    expected_ids_ok: bool | None = True,
    reload_verified: bool | None = True,
    base_revision: str | None = None,
    run_stopped: bool = False,
    run_id: str | None = "r-12",
) -> tuple[str, ...]:
    return check_deliverable(
        kind,  # type: ignore[arg-type]
        files,
        expected_ids_ok,
        reload_verified,
        base_revision,
        run_stopped,
        run_id,
    )


def test_it_accepts_a_complete_verified_deliverable_with_no_reasons() -> None:
    assert check([PREDICTIONS, MANIFEST]) == ()


def test_it_rejects_a_deliverable_without_files() -> None:
    assert check([]) == (REASON_NO_FILES,)


def test_it_names_each_empty_file() -> None:
    reasons = check([FileEntry("outputs/a.jsonl", 0, GOOD_SHA), FileEntry("b.csv", 0, GOOD_SHA)])

    assert reasons == ("empty file: outputs/a.jsonl (0 bytes)", "empty file: b.csv (0 bytes)")


@pytest.mark.parametrize(
    "path",
    [
        "/tmp/run/predictions.jsonl",
        "/var/tmp/predictions.jsonl",
        "/var/folders/xy/T/predictions.jsonl",
        "/private/var/folders/xy/T/predictions.jsonl",
        "/dev/shm/predictions.jsonl",
        "/home/me/tmpab12cd/predictions.jsonl",
        "tmp/predictions.jsonl",
        "/data/../tmp/predictions.jsonl",
        "C:\\Users\\me\\AppData\\Local\\Temp\\predictions.jsonl",
        "$TMPDIR/predictions.jsonl",
        "file:///tmp/predictions.jsonl",
    ],
)
def test_it_names_a_path_under_a_temporary_directory(path: str) -> None:
    reasons = check([FileEntry(path, 10, GOOD_SHA)])

    assert len(reasons) == 1
    assert reasons[0].startswith("path under a temporary directory")
    assert path in reasons[0]


@pytest.mark.parametrize(
    "path",
    [
        "/data/campaign/predictions.jsonl",
        "outputs/tmp_notes.txt",
        "/srv/templates/predictions.jsonl",
        "/home/me/attempts/predictions.jsonl",
    ],
)
def test_it_does_not_mistake_kept_paths_for_temporary_ones(path: str) -> None:
    assert temporary_directory_of(path) is None
    assert check([FileEntry(path, 10, GOOD_SHA)]) == ()


@pytest.mark.parametrize("sha", ["", "a" * 63, "a" * 65, "g" * 64, "sha256:" + "a" * 57])
def test_it_names_a_file_with_a_malformed_sha256(sha: str) -> None:
    reasons = check([FileEntry("outputs/predictions.jsonl", 10, sha)])

    assert reasons == (
        "malformed sha256 for outputs/predictions.jsonl: expected 64 hexadecimal characters",
    )


def test_it_rejects_a_stopped_run_and_names_it() -> None:
    reasons = check([PREDICTIONS], run_stopped=True, run_id="r-12")

    assert reasons == ("run r-12 was stopped: a stopped run never becomes an accepted deliverable",)


def test_it_rejects_a_stopped_run_even_without_its_id() -> None:
    reasons = check([PREDICTIONS], run_stopped=True, run_id=None)

    assert reasons and reasons[0].startswith("the run was stopped")


@pytest.mark.parametrize("base_revision", [None, "", "   "])
def test_it_rejects_an_adapter_without_its_base_revision(base_revision: str | None) -> None:
    assert check([PREDICTIONS], kind="adapter", base_revision=base_revision) == (
        REASON_ADAPTER_BASE,
    )


def test_it_accepts_an_adapter_that_keeps_its_base_revision() -> None:
    assert check([PREDICTIONS], kind="adapter", base_revision="meta-llama/x@3f2a9c1") == ()


def test_it_distinguishes_wrong_expected_identifiers_from_unchecked_ones() -> None:
    assert check([PREDICTIONS], expected_ids_ok=False) == (REASON_EXPECTED_IDS_BAD,)
    assert check([PREDICTIONS], expected_ids_ok=None) == (REASON_EXPECTED_IDS_UNCHECKED,)
    assert REASON_EXPECTED_IDS_BAD == "expected identifiers missing or unexpected"
    assert REASON_EXPECTED_IDS_UNCHECKED == "expected identifiers not checked"


def test_it_rejects_files_that_could_not_or_were_not_reloaded() -> None:
    assert check([PREDICTIONS], reload_verified=False) == (REASON_RELOAD_FAILED,)
    assert check([PREDICTIONS], reload_verified=None) == (REASON_RELOAD_UNCHECKED,)
    assert "not a verified output" in REASON_RELOAD_FAILED


def test_it_reports_a_duplicate_path_once_even_when_spelled_differently() -> None:
    reasons = check([PREDICTIONS, FileEntry("./outputs/predictions.jsonl", 9, GOOD_SHA)])

    assert reasons == ("duplicate path: outputs/predictions.jsonl is listed 2 times",)


def test_it_lists_every_problem_in_a_stable_order() -> None:
    reasons = check(
        [FileEntry("/tmp/x.jsonl", 0, "nope")],
        kind="adapter",
        expected_ids_ok=None,
        reload_verified=False,
        run_stopped=True,
    )

    assert reasons == (
        "run r-12 was stopped: a stopped run never becomes an accepted deliverable",
        "empty file: /tmp/x.jsonl (0 bytes)",
        "path under a temporary directory (/tmp): /tmp/x.jsonl will not survive the machine",
        "malformed sha256 for /tmp/x.jsonl: expected 64 hexadecimal characters",
        REASON_ADAPTER_BASE,
        REASON_EXPECTED_IDS_UNCHECKED,
        REASON_RELOAD_FAILED,
    )


def test_it_refuses_an_unknown_deliverable_kind() -> None:
    with pytest.raises(ValueError, match="unknown deliverable kind"):
        check([PREDICTIONS], kind="weights")


@given(
    st.text(alphabet="abcdefghij0123456789_-.", min_size=1, max_size=20).filter(
        lambda name: name not in (".", "..")
    )
)
def test_it_flags_any_file_placed_directly_under_tmp(name: str) -> None:
    path = f"/tmp/{name}"

    reasons = check([FileEntry(path, 10, GOOD_SHA)])

    assert reasons == (
        f"path under a temporary directory (/tmp): {path} will not survive the machine",
    )

"""Server-side checks of a submitted deliverable (pure: no Django, no I/O).

A deliverable is accepted only when every check passes; otherwise each failed check gives one
rejection reason in plain words, naming the file or run concerned (docs/domain.md §4 and §14).
``check_deliverable`` returns those reasons; an empty tuple means accepted.

Checks, in the order reasons are reported:

1. The run was stopped by a rule or a person: a stopped run never becomes an accepted
   deliverable (its hours and money still count in the ledger).
2. No files were listed.
3. Per file, in the order given: empty path; path listed twice (compared after normalizing
   ``./`` and ``..``); negative size; empty file (0 bytes); path under a temporary directory;
   malformed sha256 (must be 64 hexadecimal characters, either case); then, for a file the
   run logged as an artifact, a size or digest other than the stored one.
4. An adapter without the exact revision of its base model (``base_revision``).
5. Expected identifiers: ``False`` means missing or unexpected ones, ``None`` means not checked.
6. Reload: a file that is present but cannot be reloaded is not a verified output; ``None``
   means the reload was never tried.

Checks 5 and 6 are about outputs a program reads back (predictions, artifacts, adapters, other
files): a note a person reads (``error_analysis``, in ``NOTES``) has no identifiers to match and
nothing to reload, so they do not apply to it; its files are still checked.

Temporary directories: a path is refused when it starts with /tmp, /var/tmp, /private/tmp,
/var/folders, /private/var/folders or /dev/shm, or when any DIRECTORY component is named like
``tmp*`` (``tmp``, ``tmpab12cd``, ``tmpfs``), is ``temp`` (Windows), or is a ``$TMPDIR``/``$TEMP``
variable. Backslashes count as separators and a ``file://`` prefix is ignored. The file name
itself is not judged: ``tmp_notes.txt`` in a kept folder is a kept file.

Units: sizes are bytes; paths are as the client reported them.
"""

import posixpath
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final, Literal, get_args

DeliverableKind = Literal["predictions", "error_analysis", "artifact", "adapter", "other"]
DELIVERABLE_KINDS: Final[tuple[DeliverableKind, ...]] = get_args(DeliverableKind)
# Kinds a person reads rather than a program reloads: no identifiers or reload to check.
NOTES: Final[frozenset[str]] = frozenset({"error_analysis"})

TEMPORARY_ROOTS: Final[tuple[str, ...]] = (
    "/tmp",
    "/var/tmp",
    "/private/tmp",
    "/var/folders",
    "/private/var/folders",
    "/dev/shm",
)

_SHA256: Final = re.compile(r"[0-9a-fA-F]{64}")
_TEMP_VARIABLE: Final = re.compile(r"\$\{?(tmpdir|tmp|temp)\}?|%(tmp|temp)%", re.IGNORECASE)

REASON_EXPECTED_IDS_BAD: Final = "expected identifiers missing or unexpected"
REASON_EXPECTED_IDS_UNCHECKED: Final = "expected identifiers not checked"
REASON_NO_FILES: Final = "no files were listed"
REASON_ADAPTER_BASE: Final = (
    "adapter without base_revision: the exact revision of its base model must be kept"
)
REASON_RELOAD_FAILED: Final = (
    "reload failed: a file that is present but cannot be reloaded is not a verified output"
)
REASON_RELOAD_UNCHECKED: Final = (
    "reload not verified: a file that is present but was never reloaded is not a verified output"
)


@dataclass(frozen=True)
class FileEntry:
    """A file of the deliverable as the client reported it."""

    path: str
    size_bytes: int
    sha256: str


def _normalized(path: str) -> str:
    text = path.replace("\\", "/")
    if text.lower().startswith("file://"):
        text = text[len("file://") :]
    return posixpath.normpath(text) if text else text


def temporary_directory_of(path: str) -> str | None:
    """The temporary directory ``path`` depends on (e.g. ``"/tmp"``), or None."""
    normalized = _normalized(path)
    for root in TEMPORARY_ROOTS:
        if normalized == root or normalized.startswith(root + "/"):
            return root
    directories = normalized.split("/")[:-1]
    for name in directories:
        lowered = name.lower()
        if lowered.startswith("tmp") or lowered == "temp" or _TEMP_VARIABLE.fullmatch(name):
            return name
    return None


def _file_reasons(files: list[FileEntry]) -> list[str]:
    reasons: list[str] = []
    counts = Counter(_normalized(f.path) for f in files if f.path.strip())
    reported_duplicates: set[str] = set()
    for entry in files:
        if not entry.path.strip():
            reasons.append("a file has an empty path")
            continue
        key = _normalized(entry.path)
        if counts[key] > 1 and key not in reported_duplicates:
            reported_duplicates.add(key)
            reasons.append(f"duplicate path: {entry.path} is listed {counts[key]} times")
        if entry.size_bytes < 0:
            reasons.append(f"invalid size for {entry.path}: {entry.size_bytes} bytes")
        elif entry.size_bytes == 0:
            reasons.append(f"empty file: {entry.path} (0 bytes)")
        temporary = temporary_directory_of(entry.path)
        if temporary is not None:
            reasons.append(
                f"path under a temporary directory ({temporary}): {entry.path} "
                "will not survive the machine"
            )
        if not _SHA256.fullmatch(entry.sha256):
            reasons.append(f"malformed sha256 for {entry.path}: expected 64 hexadecimal characters")
    return reasons


def _output_reasons(expected_ids_ok: bool | None, reload_verified: bool | None) -> list[str]:
    """Checks 5 and 6, for outputs a program reads back."""
    reasons = []
    if expected_ids_ok is None:
        reasons.append(REASON_EXPECTED_IDS_UNCHECKED)
    elif not expected_ids_ok:
        reasons.append(REASON_EXPECTED_IDS_BAD)
    if reload_verified is None:
        reasons.append(REASON_RELOAD_UNCHECKED)
    elif not reload_verified:
        reasons.append(REASON_RELOAD_FAILED)
    return reasons


def check_deliverable(
    kind: DeliverableKind,
    files: Iterable[FileEntry],
    expected_ids_ok: bool | None,
    reload_verified: bool | None,
    base_revision: str | None,
    run_stopped: bool,
    run_id: str | None,
    artifacts: Mapping[str, tuple[int, str]] | None = None,
) -> tuple[str, ...]:
    """Rejection reasons in words, in a stable order; an empty tuple means accepted.

    Raises ValueError for an unknown ``kind``: that is a malformed request, not a rejection.
    """
    if kind not in DELIVERABLE_KINDS:
        raise ValueError(
            f"unknown deliverable kind {kind!r}; expected one of {', '.join(DELIVERABLE_KINDS)}"
        )
    reasons: list[str] = []
    if run_stopped:
        run = f"run {run_id}" if run_id else "the run"
        reasons.append(f"{run} was stopped: a stopped run never becomes an accepted deliverable")
    listed = list(files)
    if not listed:
        reasons.append(REASON_NO_FILES)
    reasons.extend(_file_reasons(listed))
    for entry in listed:
        # A file the run logged as an artifact is what the server stored, byte for byte.
        size, digest = (artifacts or {}).get(entry.path, (entry.size_bytes, entry.sha256.lower()))
        if (entry.size_bytes, entry.sha256.lower()) != (size, digest.lower()):
            reasons.append(
                f"{entry.path} differs from the artifact the run logged ({size} bytes, sha256 "
                f"{digest[:12]}…)"
            )
    if kind == "adapter" and not (base_revision or "").strip():
        reasons.append(REASON_ADAPTER_BASE)
    if kind not in NOTES:
        reasons.extend(_output_reasons(expected_ids_ok, reload_verified))
    # Two files with the same problem must not hide each other, but identical words add nothing.
    return tuple(dict.fromkeys(reasons))

"""Artifact quotas (docs/domain.md §23): how many files and bytes a run and a team may keep.

Pure: usage in, a refusal (naming the limit) or None out. Units: bytes and file counts. A file
that replaces one at the same path adds no file and only its size difference.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Usage:
    files: int
    bytes: int


@dataclass(frozen=True)
class Limits:
    run_files: int
    run_bytes: int
    team_files: int
    team_bytes: int


@dataclass(frozen=True)
class Refusal:
    setting: str  # the setting that holds the limit, e.g. ARTIFACT_MAX_FILES_PER_RUN
    limit: int
    would_be: int

    def message(self) -> str:
        unit = "files" if "FILES" in self.setting else "bytes"
        scope = "run" if self.setting.endswith("_RUN") else "team"
        return (
            f"the {scope}'s artifacts would come to {self.would_be} {unit}: the limit is "
            f"{self.limit} {unit} ({self.setting})"
        )


def refusal(
    run: Usage, team: Usage, limits: Limits, *, incoming_bytes: int, replaced_bytes: int | None
) -> Refusal | None:
    """The first limit the upload would pass (None: it fits). `replaced_bytes` is the size of
    the file at the same path (None: a new path)."""
    added_files = 0 if replaced_bytes is not None else 1
    added_bytes = incoming_bytes - (replaced_bytes or 0)
    checks = (
        ("ARTIFACT_MAX_FILES_PER_RUN", limits.run_files, run.files + added_files, added_files),
        ("ARTIFACT_MAX_BYTES_PER_RUN", limits.run_bytes, run.bytes + added_bytes, added_bytes),
        ("ARTIFACT_MAX_FILES_PER_TEAM", limits.team_files, team.files + added_files, added_files),
        ("ARTIFACT_MAX_BYTES_PER_TEAM", limits.team_bytes, team.bytes + added_bytes, added_bytes),
    )
    for setting, limit, would_be, added in checks:
        if added > 0 and would_be > limit:
            return Refusal(setting, limit, would_be)
    return None

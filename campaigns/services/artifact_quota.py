"""Checking an artifact upload against the run's and the team's quotas (docs/domain.md §23).

`check_artifact_quota` is called twice: before the body is read (with the declared
Content-Length, so an upload over quota is refused at once) and by `ingest.record_artifact`
under the run's lock with the stored size (the last word). Limits are settings:
ARTIFACT_MAX_FILES_PER_RUN, ARTIFACT_MAX_BYTES_PER_RUN, ARTIFACT_MAX_FILES_PER_TEAM,
ARTIFACT_MAX_BYTES_PER_TEAM.
"""

from __future__ import annotations

from django.conf import settings
from django.db.models import Count, Sum

from campaigns.domain.artifact_quota import Limits, Refusal, Usage, refusal
from campaigns.models import Run, RunArtifact


class ArtifactQuotaExceeded(Exception):
    """413: the upload would pass a quota; `refusal` names the setting and the limit."""

    def __init__(self, found: Refusal) -> None:
        super().__init__(found.message())
        self.refusal = found


def limits() -> Limits:
    return Limits(
        run_files=int(settings.ARTIFACT_MAX_FILES_PER_RUN),
        run_bytes=int(settings.ARTIFACT_MAX_BYTES_PER_RUN),
        team_files=int(settings.ARTIFACT_MAX_FILES_PER_TEAM),
        team_bytes=int(settings.ARTIFACT_MAX_BYTES_PER_TEAM),
    )


def _usage(**scope: object) -> Usage:
    found = RunArtifact.objects.filter(**scope).aggregate(n=Count("id"), b=Sum("size_bytes"))
    return Usage(int(found["n"] or 0), int(found["b"] or 0))


def check_artifact_quota(run: Run, *, path: str, size_bytes: int) -> None:
    """Raise ArtifactQuotaExceeded if storing `size_bytes` at `path` passes a quota."""
    previous = (
        RunArtifact.objects.filter(run=run, path=path).values_list("size_bytes", flat=True).first()
    )
    found = refusal(
        _usage(run=run),
        _usage(run__team_id=run.team_id),
        limits(),
        incoming_bytes=size_bytes,
        replaced_bytes=previous,
    )
    if found is not None:
        raise ArtifactQuotaExceeded(found)

"""Artifact files nothing refers to (docs/domain.md §23): a worker killed while it received an
upload (SIGKILL, the out-of-memory killer, a pod evicted) never reached the code that deletes
the partial file, so its file stays in storage with no RunArtifact row. The sweep deletes such
files once they are older than any upload may still be running (ARTIFACT_UPLOAD_SECONDS and a
margin): a file being received now is younger, and a stored artifact has its row.

Files are listed through the default storage (the local folder or any django-storages
backend), under the upload prefix only.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone

from campaigns.models import RunArtifact

# Where the MLflow facade stores uploads (mlflow_api/views/artifacts.py).
UPLOAD_PREFIX = "mlflow-artifacts"


def _files(folder: str) -> Iterator[str]:
    directories, files = default_storage.listdir(folder)
    for name in files:
        yield f"{folder}/{name}"
    for name in directories:
        yield from _files(f"{folder}/{name}")


def _older_than(name: str, cutoff: datetime) -> bool:
    try:
        return bool(default_storage.get_modified_time(name) < cutoff)
    except (OSError, NotImplementedError):
        return False


@transaction.atomic
def sweep_orphan_files(
    *, older_than_seconds: float, acting_user: AbstractBaseUser | AnonymousUser | None = None
) -> int:
    """Delete the upload files no artifact row names, last written longer ago than
    `older_than_seconds`; returns how many."""
    if not default_storage.exists(UPLOAD_PREFIX):
        return 0
    cutoff = timezone.now() - timedelta(seconds=older_than_seconds)
    candidates = [n for n in _files(UPLOAD_PREFIX) if _older_than(n, cutoff)]
    known = set(
        RunArtifact.objects.filter(storage_name__in=candidates).values_list(
            "storage_name", flat=True
        )
    )
    orphans = [name for name in candidates if name not in known]
    for name in orphans:
        default_storage.delete(name)
    return len(orphans)

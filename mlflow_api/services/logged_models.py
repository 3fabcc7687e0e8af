"""Logged models (MLflow 3's `log_model`, autolog): create, finalize, tag, delete, and the files
of a model logged outside a run (docs/mlflow.md "Artifacts")."""

from __future__ import annotations

import uuid

from django.db import transaction
from django.db.models import Count, Sum
from django.utils import timezone

from campaigns.domain.artifact_quota import Usage, refusal
from campaigns.models import Campaign, Run, RunArtifact
from campaigns.services.artifact_quota import ArtifactQuotaExceeded, limits
from mlflow_api.models import Experiment, LoggedModel, LoggedModelArtifact


@transaction.atomic
def create_logged_model(
    *,
    campaign: Campaign,
    name: str,
    model_type: str = "",
    source_run: Run | None = None,
    source_run_ref: str = "",
    experiment: Experiment | None = None,
    tags: dict[str, str] | None = None,
    params: dict[str, str] | None = None,
) -> LoggedModel:
    """A new model; one without a name gets one of its own, as MLflow's server gives it."""
    campaign.refuse_if_closed()
    model_id = "m-" + uuid.uuid4().hex
    return LoggedModel.objects.create(
        model_id=model_id,
        campaign=campaign,
        experiment=experiment,
        source_run=source_run,
        source_run_ref=source_run_ref or (source_run.run_id if source_run else ""),
        name=name or f"model-{model_id[2:10]}",
        model_type=model_type,
        tags=tags or {},
        params=params or {},
    )


@transaction.atomic
def update_logged_model(
    model: LoggedModel,
    *,
    status: str | None = None,
    tags: dict[str, str] | None = None,
    params: dict[str, str] | None = None,
    delete_tags: tuple[str, ...] = (),
) -> LoggedModel:
    """Finalize a model (its status), or add tags and params; locked, so concurrent PATCHes
    of one model do not lose each other's keys."""
    model = LoggedModel.objects.select_for_update().get(pk=model.pk)
    if status is not None:
        model.status = status
    if tags:
        model.tags = {**model.tags, **tags}
    for key in delete_tags:
        model.tags.pop(key, None)
    if params:
        model.params = {**model.params, **params}
    model.save()
    return model


@transaction.atomic
def delete_logged_model(model: LoggedModel) -> LoggedModel:
    """Soft, as MLflow's: hidden from search and get, its files kept."""
    model = LoggedModel.objects.select_for_update().get(pk=model.pk)
    if model.deleted_at is None:
        model.deleted_at = timezone.now()
        model.save(update_fields=["deleted_at", "updated_at"])
    return model


@transaction.atomic
def record_model_file(
    model: LoggedModel,
    *,
    path: str,
    size_bytes: int,
    sha256: str,
    storage_name: str,
    content_type: str = "",
) -> tuple[LoggedModelArtifact, str | None]:
    """Record (or replace) a file of a model without a source run; returns it and the storage
    name of the file it replaced, for the caller to delete once this has committed."""
    LoggedModel.objects.select_for_update().get(pk=model.pk)
    previous = LoggedModelArtifact.objects.filter(model=model, path=path).first()
    check_model_file_quota(model, size_bytes, previous.size_bytes if previous else None)
    fields = {
        "size_bytes": size_bytes,
        "sha256": sha256,
        "storage_name": storage_name,
        "content_type": content_type,
    }
    if previous is None:
        return LoggedModelArtifact.objects.create(model=model, path=path, **fields), None
    replaced = previous.storage_name if previous.storage_name != storage_name else None
    for field, value in fields.items():
        setattr(previous, field, value)
    previous.save()
    return previous, replaced


def _usage(rows: dict[str, int | None]) -> Usage:
    return Usage(int(rows["n"] or 0), int(rows["b"] or 0))


def check_model_file_quota(model: LoggedModel, size_bytes: int, replaced: int | None) -> None:
    """The artifact quotas (docs/domain.md §23) for a model's own files: the model counts as a
    run, its files count towards its team's."""
    team_id = model.campaign.team_id
    sizes = {"n": Count("id"), "b": Sum("size_bytes")}
    own = LoggedModelArtifact.objects.filter(model=model).aggregate(**sizes)
    team_runs = RunArtifact.objects.filter(run__team_id=team_id).aggregate(**sizes)
    team_models = LoggedModelArtifact.objects.filter(model__campaign__team_id=team_id).aggregate(
        **sizes
    )
    team = Usage(
        _usage(team_runs).files + _usage(team_models).files,
        _usage(team_runs).bytes + _usage(team_models).bytes,
    )
    found = refusal(_usage(own), team, limits(), incoming_bytes=size_bytes, replaced_bytes=replaced)
    if found is not None:
        raise ArtifactQuotaExceeded(found)

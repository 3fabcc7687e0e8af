"""The write path of the MLflow facade's own records (logged models). Run data never goes
through here: it goes through campaigns/services/ingest.py, as /api/v1/ does."""

from __future__ import annotations

import uuid

from django.db import transaction

from campaigns.models import Campaign, Run
from mlflow_api.models import LoggedModel


@transaction.atomic
def create_logged_model(
    *,
    campaign: Campaign,
    name: str,
    model_type: str = "",
    source_run: Run | None = None,
    tags: dict[str, str] | None = None,
    params: dict[str, str] | None = None,
) -> LoggedModel:
    return LoggedModel.objects.create(
        model_id="m-" + uuid.uuid4().hex,
        campaign=campaign,
        source_run=source_run,
        name=name or "model",
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

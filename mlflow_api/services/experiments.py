"""Experiments as named groups of runs inside a campaign (docs/mlflow.md "Experiments"), and the
MLflow side of a run (its experiment, the client's start and end times).

A name is unique within its campaign, deleted experiments included (as MLflow's names are);
the campaign's own name ("Default" too) is its default experiment. Deleting is soft: the
experiment's runs stay in the campaign with their hours and cost.
"""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.utils import timezone

from campaigns.models import Campaign, Run
from mlflow_api.models import DEFAULT_NAME, Experiment, MlflowRun


class NameTaken(Exception):
    """Another experiment of the campaign has this name."""


@transaction.atomic
def create_experiment(*, campaign: Campaign, name: str, tags: dict[str, str]) -> Experiment:
    campaign.refuse_if_closed()
    try:
        with transaction.atomic():
            return Experiment.objects.create(campaign=campaign, name=name, tags=tags)
    except IntegrityError:
        raise NameTaken(name) from None


def _locked(experiment: Experiment) -> Experiment:
    return Experiment.objects.select_for_update().get(pk=experiment.pk)


@transaction.atomic
def set_experiment_tags(
    *, campaign: Campaign, experiment: Experiment | None, tags: dict[str, str]
) -> Experiment:
    """Set tags on a named experiment, or (None) on the campaign's default experiment."""
    if experiment is None:
        experiment, _ = Experiment.objects.get_or_create(campaign=campaign, name=DEFAULT_NAME)
    experiment = _locked(experiment)
    experiment.tags = {**experiment.tags, **tags}
    experiment.save(update_fields=["tags", "updated_at"])
    return experiment


@transaction.atomic
def delete_experiment_tag(*, experiment: Experiment, key: str) -> Experiment:
    experiment = _locked(experiment)
    experiment.tags = {k: v for k, v in experiment.tags.items() if k != key}
    experiment.save(update_fields=["tags", "updated_at"])
    return experiment


@transaction.atomic
def rename_experiment(*, experiment: Experiment, name: str) -> Experiment:
    experiment = _locked(experiment)
    experiment.name = name
    try:
        with transaction.atomic():
            experiment.save(update_fields=["name", "updated_at"])
    except IntegrityError:
        raise NameTaken(name) from None
    return experiment


@transaction.atomic
def delete_experiment(*, experiment: Experiment) -> Experiment:
    experiment = _locked(experiment)
    if experiment.deleted_at is None:
        experiment.deleted_at = timezone.now()
        experiment.save(update_fields=["deleted_at", "updated_at"])
    return experiment


@transaction.atomic
def restore_experiment(*, experiment: Experiment) -> Experiment:
    experiment = _locked(experiment)
    if experiment.deleted_at is not None:
        experiment.deleted_at = None
        experiment.save(update_fields=["deleted_at", "updated_at"])
    return experiment


@transaction.atomic
def place_run(
    *,
    run: Run,
    experiment: Experiment | None,
    start_time_ms: int | None = None,
    end_time_ms: int | None = None,
) -> MlflowRun:
    """Record (or update) a run's MLflow side: its experiment and the client's times, as sent
    (echoed by runs/get; Campaign Desk's hours are its own, docs/domain.md §8)."""
    side, created = MlflowRun.objects.get_or_create(
        run=run,
        defaults={
            "experiment": experiment,
            "start_time_ms": start_time_ms,
            "end_time_ms": end_time_ms,
        },
    )
    if not created:
        changed = []
        if start_time_ms is not None and side.start_time_ms != start_time_ms:
            side.start_time_ms = start_time_ms
            changed.append("start_time_ms")
        if end_time_ms is not None and side.end_time_ms != end_time_ms:
            side.end_time_ms = end_time_ms
            changed.append("end_time_ms")
        if changed:
            side.save(update_fields=changed)
    return side

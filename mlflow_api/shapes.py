"""Campaign Desk objects in MLflow's JSON shapes (mlflow/protos/service.proto, proto3 JSON
with snake_case names; int64 times as numbers, as MLflow's own server writes them).

experiment = campaign (`experiment_id` is the campaign id as a string); run = run (`run_id`
is the Campaign Desk run id); params = top-level keys of the run's config; tags = the run's
tags; metrics = the latest value of each metric by step.
"""

from __future__ import annotations

import json
import math
from datetime import datetime
from typing import Any

from campaigns.models import Campaign, MetricPoint, Run, RunStatus
from campaigns.selectors import run_metrics
from mlflow_api.models import Experiment, LoggedModel, MlflowRun

STATUS = {
    RunStatus.RUNNING: "RUNNING",
    RunStatus.COMPLETED: "FINISHED",
    RunStatus.FAILED: "FAILED",
    # Stopped by a rule: MLflow has no such state; KILLED is the nearest (ended from outside).
    RunStatus.STOPPED: "KILLED",
}


def ms(moment: datetime | None) -> int | None:
    return None if moment is None else int(moment.timestamp() * 1000)


def metric_value(value: float) -> float | str:
    """proto3 JSON writes non-finite doubles as the strings "NaN", "Infinity", "-Infinity"."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return value


def pairs(mapping: dict[str, Any]) -> list[dict[str, str]]:
    return [{"key": k, "value": as_text(v)} for k, v in mapping.items()]


def as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def experiment(
    campaign: Campaign, named: Experiment | None, tags: dict[str, str]
) -> dict[str, Any]:
    """A campaign's default experiment (`named` None: its title, its desk.* tags and the tags
    set on it) or a named experiment of it (its own tags only, as MLflow keeps them)."""
    if named is None:
        experiment_id, name = str(campaign.pk), campaign.title
        shown_tags = {"desk.status": campaign.status, "desk.team": str(campaign.team_id), **tags}
        created, updated, deleted = campaign.created_at, campaign.updated_at, False
    else:
        experiment_id, name, shown_tags = named.experiment_id, named.name, named.tags
        created, updated = named.created_at, named.updated_at
        deleted = named.deleted_at is not None
    return {
        "experiment_id": experiment_id,
        "name": name,
        "artifact_location": f"mlflow-artifacts:/{experiment_id}",
        "lifecycle_stage": "deleted" if deleted else "active",
        "creation_time": ms(created),
        "last_update_time": ms(updated),
        "tags": pairs(shown_tags),
    }


def experiment_id_of(run: Run) -> str:
    """The run's experiment: a named one (its MLflow side), else its campaign's default."""
    side = mlflow_side(run)
    if side is not None and side.experiment is not None:
        return side.experiment.experiment_id
    return str(run.campaign_id)


def mlflow_side(run: Run) -> MlflowRun | None:
    try:
        return run.mlflow
    except MlflowRun.DoesNotExist:
        return None


def artifact_uri(experiment_id: str, run_id: str) -> str:
    return f"mlflow-artifacts:/{experiment_id}/{run_id}/artifacts"


def run_info(run: Run) -> dict[str, Any]:
    """MLflow's RunInfo. `start_time` / `end_time` are the client's when it sent them (kept
    as sent, mlflow_api.models.MlflowRun), else the server's moments."""
    side = mlflow_side(run)
    experiment_id = experiment_id_of(run)
    start = side.start_time_ms if side is not None else None
    info: dict[str, Any] = {
        "run_id": run.run_id,
        "run_uuid": run.run_id,
        "run_name": run.run_name or run.run_id,
        "experiment_id": experiment_id,
        "user_id": str(run.tags.get("mlflow.user", "")),
        "status": STATUS.get(run.status, "RUNNING"),  # type: ignore[call-overload]
        "start_time": start if start is not None else ms(run.started_at),
        "artifact_uri": artifact_uri(experiment_id, run.run_id),
        "lifecycle_stage": "deleted" if run.deleted_at is not None else "active",
    }
    end = run.ended_at or run.finished_at
    if end is None and run.status == RunStatus.STOPPED:
        end = run.stopped_at
    if end is not None:
        client_end = side.end_time_ms if side is not None else None
        info["end_time"] = client_end if client_end is not None else ms(end)
    return info


def latest_metrics(run: Run) -> list[dict[str, Any]]:
    """The last point of each metric (highest step, then the last logged)."""
    return [metric(p) for p in run_metrics.last_points([run.pk]).get(run.pk, [])]


def metric(point: MetricPoint, run_id: str | None = None) -> dict[str, Any]:
    """A point as MLflow shows it: the client's timestamp when it sent one (else the server's
    time of receipt) and the logged model it describes."""
    shown: dict[str, Any] = {
        "key": point.name,
        "value": metric_value(point.as_float()),
        "timestamp": point.timestamp_ms if point.timestamp_ms is not None else ms(point.created_at),
        "step": point.step,
    }
    if run_id is not None:
        shown["run_id"] = run_id
    if point.model_id:
        shown["model_id"] = point.model_id
    return shown


def run(run: Run, metrics: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "info": run_info(run),
        "data": {
            "metrics": latest_metrics(run) if metrics is None else metrics,
            "params": pairs(run.config),
            "tags": pairs({**run.tags, "mlflow.runName": run.run_name or run.run_id}),
        },
        "inputs": {"dataset_inputs": run.inputs},
    }


def logged_model(model: LoggedModel, metrics: list[dict[str, Any]]) -> dict[str, Any]:
    experiment_id = (
        model.experiment.experiment_id if model.experiment is not None else str(model.campaign_id)
    )
    return {
        "info": {
            "model_id": model.model_id,
            "experiment_id": experiment_id,
            "name": model.name,
            "creation_timestamp_ms": ms(model.created_at),
            "last_updated_timestamp_ms": ms(model.updated_at),
            "artifact_uri": f"mlflow-artifacts:/{experiment_id}/models/{model.model_id}/artifacts",
            "status": model.status,
            "model_type": model.model_type,
            "source_run_id": model.source_run_ref,
            "status_message": "",
            "tags": pairs(model.tags),
        },
        "data": {"params": pairs(model.params), "metrics": metrics},
    }

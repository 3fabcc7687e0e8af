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
from campaigns.selectors import run_metrics as readings
from mlflow_api.models import LoggedModel

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


def experiment(campaign: Campaign) -> dict[str, Any]:
    return {
        "experiment_id": str(campaign.pk),
        "name": campaign.title,
        "artifact_location": f"mlflow-artifacts:/{campaign.pk}",
        "lifecycle_stage": "active",
        "creation_time": ms(campaign.created_at),
        "last_update_time": ms(campaign.updated_at),
        "tags": [
            {"key": "desk.status", "value": campaign.status},
            {"key": "desk.team", "value": str(campaign.team_id)},
        ],
    }


def artifact_uri(campaign_id: int, run_id: str) -> str:
    return f"mlflow-artifacts:/{campaign_id}/{run_id}/artifacts"


def run_info(run: Run) -> dict[str, Any]:
    info: dict[str, Any] = {
        "run_id": run.run_id,
        "run_uuid": run.run_id,
        "run_name": run.run_name or run.run_id,
        "experiment_id": str(run.campaign_id),
        "user_id": str(run.tags.get("mlflow.user", "")),
        "status": STATUS.get(run.status, "RUNNING"),  # type: ignore[call-overload]
        "start_time": ms(run.started_at),
        "artifact_uri": artifact_uri(run.campaign_id, run.run_id),
        "lifecycle_stage": "deleted" if run.deleted_at is not None else "active",
    }
    end = run.ended_at or run.finished_at
    if end is None and run.status == RunStatus.STOPPED:
        end = run.stopped_at
    if end is not None:
        info["end_time"] = ms(end)
    return info


def latest_metrics(run: Run) -> list[dict[str, Any]]:
    """The last point of each metric (highest step, then the last logged)."""
    return [metric(p) for p in readings.last_points([run.pk]).get(run.pk, [])]


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


def logged_model(model: LoggedModel, run_id: str | None) -> dict[str, Any]:
    return {
        "info": {
            "model_id": model.model_id,
            "experiment_id": str(model.campaign_id),
            "name": model.name,
            "creation_timestamp_ms": ms(model.created_at),
            "last_updated_timestamp_ms": ms(model.updated_at),
            "artifact_uri": f"mlflow-artifacts:/{model.campaign_id}/models/{model.model_id}"
            "/artifacts",
            "status": model.status,
            "model_type": model.model_type,
            "source_run_id": run_id or "",
            "status_message": "",
            "tags": pairs(model.tags),
        },
        "data": {"params": pairs(model.params), "metrics": []},
    }

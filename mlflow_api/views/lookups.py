"""Finding the caller's experiments (campaigns) and runs, and the refusals a finished or stopped
run answers, in MLflow's words."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from campaigns.models import (
    Campaign,
    Run,
    RunStatus,
)
from campaigns.services import ingest
from mlflow_api.auth import Caller
from mlflow_api.errors import MlflowError
from mlflow_api.views.wire import is_id

DEFAULT_EXPERIMENT = "0"


def campaign_of(caller: Caller, experiment_id: Any) -> Campaign:
    """The campaign an experiment id names. MLflow's default experiment ("0", what a client
    sends when no experiment was set, e.g. the HF Trainer's defaults) is the key's campaign."""
    text = str(experiment_id or "")
    if text in ("", DEFAULT_EXPERIMENT):
        if caller.key is not None:
            return caller.key.campaign
        raise MlflowError(
            "RESOURCE_DOES_NOT_EXIST",
            "MLflow's default experiment is no campaign for a user token: set "
            "MLFLOW_EXPERIMENT_NAME (or mlflow.set_experiment) to a campaign's id or title, "
            "or use a campaign ingest key as MLFLOW_TRACKING_TOKEN",
        )
    campaign = caller.campaigns().filter(pk=int(text)).first() if is_id(text) else None
    if campaign is None:
        raise MlflowError(
            "RESOURCE_DOES_NOT_EXIST", f"no experiment with id {text!r} (a campaign id)"
        )
    return campaign


def campaign_by_name(caller: Caller, name: str) -> Campaign:
    """With an ingest key every name is its campaign; a user names a campaign by id or title."""
    if caller.key is not None:
        return caller.key.campaign
    campaigns = caller.campaigns()
    found = campaigns.filter(pk=int(name)).first() if is_id(name) else None
    if found is None:
        matches = list(campaigns.filter(title=name)[:2])
        if len(matches) == 1:
            found = matches[0]
        elif matches:
            raise MlflowError(
                "INVALID_PARAMETER_VALUE",
                f"several of your campaigns are titled {name!r}: name one by its id",
            )
    if found is None:
        raise MlflowError(
            "RESOURCE_DOES_NOT_EXIST",
            f"no campaign of yours has the id or title {name!r}; experiments are campaigns, "
            "created in Campaign Desk",
        )
    return found


def run_id_of(data: dict[str, Any]) -> str:
    run_id = data.get("run_id") or data.get("run_uuid")
    if not isinstance(run_id, str) or not run_id:
        raise MlflowError("INVALID_PARAMETER_VALUE", "missing value for parameter 'run_id'")
    return run_id


def ambiguous(run_id: str) -> MlflowError:
    """A run id is unique within a team only: a member of two teams that both have it gets the
    REST API's 409 (campaigns/api/permissions.py `run_for`), never the first team's run."""
    return MlflowError(
        "RESOURCE_CONFLICT",
        f"run id {run_id!r} exists in several of your teams; use an ingest key or a token of a "
        "user in only one of them",
        status=409,
    )


def run_of(caller: Caller, data: dict[str, Any]) -> Run:
    run_id = data.get("run_id") or data.get("run_uuid")
    found = (
        list(caller.runs().filter(run_id=run_id).select_related("campaign")[:2])
        if isinstance(run_id, str)
        else []
    )
    if not found:
        raise MlflowError("RESOURCE_DOES_NOT_EXIST", f"run {run_id!r} not found")
    if len(found) > 1:
        raise ambiguous(str(run_id))
    return found[0]


def stopped(run: Run) -> MlflowError:
    by = f"rule #{run.stop_rule_id}" if run.stop_rule_id else "hand"
    return MlflowError("INVALID_STATE", f"run {run.run_id} was stopped by {by}: {run.stop_reason}")


def refused(exc: ingest.RunRefused) -> MlflowError:
    if exc.run.status == RunStatus.STOPPED:
        return stopped(exc.run)
    return MlflowError("INVALID_STATE", str(exc))


def require_running(run: Run) -> None:
    if run.status == RunStatus.STOPPED:
        raise stopped(run)
    if run.status != RunStatus.RUNNING:
        raise MlflowError("INVALID_STATE", f"run {run.run_id} is finished ({run.status})")


def write_scope(caller: Caller, data: dict[str, Any]) -> tuple[QuerySet[Run], str]:
    """The runs this caller may write, and the run id the body names (the service looks it up
    and locks it in one statement); a user token needs a planner's or owner's role."""
    run_id = run_id_of(data)
    if caller.key is not None:
        return caller.runs(), run_id
    team_ids = list(caller.runs().filter(run_id=run_id).values_list("team_id", flat=True)[:2])
    if not team_ids:
        raise MlflowError("RESOURCE_DOES_NOT_EXIST", f"run {run_id!r} not found")
    if len(team_ids) > 1:
        raise ambiguous(run_id)
    team_id = team_ids[0]
    caller.require_write(team_id)
    return caller.runs().filter(team_id=team_id), run_id


def refusal(exc: ingest.RunRefused) -> MlflowError:
    """A service's refusal in MLflow's words: a stop names its rule (INVALID_STATE), a refused
    value of a running run is INVALID_PARAMETER_VALUE."""
    if exc.run.status == RunStatus.RUNNING and exc.run.deleted_at is None:
        return MlflowError("INVALID_PARAMETER_VALUE", str(exc))
    return refused(exc)

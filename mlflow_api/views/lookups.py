"""Finding the caller's experiments (campaigns) and runs, and the refusals a finished or stopped
run answers, in MLflow's words."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from campaigns.models import (
    Campaign,
    Run,
    RunStatus,
)
from campaigns.services import ingest
from mlflow_api.auth import Caller
from mlflow_api.domain import names
from mlflow_api.errors import MlflowError
from mlflow_api.models import DEFAULT_NAME, Experiment
from mlflow_api.views.wire import is_id

DEFAULT_EXPERIMENT = "0"
# MLflow's name for its default experiment: here, the campaign's.
DEFAULT_EXPERIMENT_NAME = "Default"


@dataclass(frozen=True)
class Place:
    """An experiment as the facade sees it: a campaign's default experiment (`experiment`
    None: the campaign itself) or a named experiment inside it."""

    campaign: Campaign
    experiment: Experiment | None = None

    @property
    def experiment_id(self) -> str:
        return self.experiment.experiment_id if self.experiment else str(self.campaign.pk)


def _no_experiment(text: str) -> MlflowError:
    return MlflowError("RESOURCE_DOES_NOT_EXIST", f"No Experiment with id={text} exists")


def experiment_of(caller: Caller, experiment_id: Any) -> Place:
    """The experiment an id names: a campaign id (its default experiment) or
    `<campaign id>-<n>` (a named one). MLflow's default experiment "0" (what a client sends
    when none was set, e.g. the HF Trainer's defaults) is the key's campaign."""
    text = str(experiment_id if experiment_id is not None else "")
    if text in ("", DEFAULT_EXPERIMENT):
        if caller.key is not None:
            return Place(caller.key.campaign)
        raise MlflowError(
            "RESOURCE_DOES_NOT_EXIST",
            "MLflow's default experiment is no campaign for a user token: set "
            "MLFLOW_EXPERIMENT_NAME (or mlflow.set_experiment) to a campaign's id or title, "
            "or use a campaign ingest key as MLFLOW_TRACKING_TOKEN",
        )
    head, dash, tail = text.partition("-")
    if not is_id(head) or (dash and not is_id(tail)):
        raise _no_experiment(text)
    if caller.key is not None:
        campaign = caller.key.campaign if caller.key.campaign_id == int(head) else None
    else:
        campaign = caller.campaigns().filter(pk=int(head)).first()
    if campaign is None:
        raise _no_experiment(text)
    if not dash:
        return Place(campaign)
    experiment = (
        Experiment.objects.filter(campaign=campaign, pk=int(tail))
        .exclude(name=DEFAULT_NAME)
        .first()
    )
    if experiment is None:
        raise _no_experiment(text)
    return Place(campaign, experiment)


def campaign_of(caller: Caller, experiment_id: Any) -> Campaign:
    return experiment_of(caller, experiment_id).campaign


def _campaign_named(caller: Caller, name: str) -> Campaign | None:
    """A user names a campaign by id or title (its default experiment)."""
    campaigns = caller.campaigns()
    found = campaigns.filter(pk=int(name)).first() if is_id(name) else None
    if found is None:
        matches = list(campaigns.filter(title=name)[:2])
        if len(matches) > 1:
            raise MlflowError(
                "INVALID_PARAMETER_VALUE",
                f"several of your campaigns are titled {name!r}: name one by its id",
            )
        found = matches[0] if matches else None
    return found


def experiment_by_name(caller: Caller, name: str) -> Place:
    """With an ingest key: the campaign's title (or "Default") is its default experiment, any
    other name an experiment of the campaign. A user names a campaign by id or title, or an
    experiment of one of the user's campaigns (one only)."""
    if caller.key is not None:
        campaign = caller.key.campaign
        if name in (campaign.title, DEFAULT_EXPERIMENT_NAME):
            return Place(campaign)
        named = Experiment.objects.filter(campaign=campaign, name=name).first()
        if named is not None and name != DEFAULT_NAME:
            return Place(campaign, named)
    else:
        found = _campaign_named(caller, name)
        if found is not None:
            return Place(found)
        experiments = list(
            Experiment.objects.filter(campaign__in=caller.campaigns(), name=name)
            .exclude(name=DEFAULT_NAME)
            .select_related("campaign")[:2]
        )
        if len(experiments) > 1:
            raise MlflowError(
                "INVALID_PARAMETER_VALUE",
                f"several of your campaigns have an experiment {name!r}: name it by its id",
            )
        if experiments:
            return Place(experiments[0].campaign, experiments[0])
    raise MlflowError("RESOURCE_DOES_NOT_EXIST", f"Could not find experiment with name {name!r}")


def run_id_of(data: dict[str, Any]) -> str:
    run_id = data.get("run_id") or data.get("run_uuid")
    if run_id is None or run_id == "":
        raise MlflowError("INVALID_PARAMETER_VALUE", names.missing("run_id"))
    if not isinstance(run_id, str):
        raise MlflowError("INVALID_PARAMETER_VALUE", names.invalid("run_id", run_id))
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


def run_not_found(run_id: str) -> MlflowError:
    return MlflowError("RESOURCE_DOES_NOT_EXIST", f"Run with id={run_id} not found")


def run_of(caller: Caller, data: dict[str, Any]) -> Run:
    """The run the body names, with its campaign and MLflow side (its experiment)."""
    run_id = run_id_of(data)
    found = list(
        caller.runs()
        .filter(run_id=run_id)
        .select_related("campaign", "mlflow", "mlflow__experiment")[:2]
    )
    if not found:
        raise run_not_found(run_id)
    if len(found) > 1:
        raise ambiguous(run_id)
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
        raise run_not_found(run_id)
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

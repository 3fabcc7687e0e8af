"""Who may do what through the API. Reads: any member of the object's team. Writes: planners
and owners. Ingest keys: only run data, only for their one campaign (`allow_ingest = True` on
the view, narrowed by `ingest_methods` when a view also lists or edits). Objects outside the
caller's teams are never found (404), so scoping happens in `get_queryset()`, `campaign_for()`
and `run_for()`, not here."""

from __future__ import annotations

from typing import Any

from django.http import Http404
from django.shortcuts import get_object_or_404
from rest_framework import exceptions, permissions
from rest_framework.request import Request

from campaigns.api.authentication import is_ingest
from campaigns.models import Campaign, Membership, Run, team_ids_for


def campaigns_for(user: Any) -> Any:
    """The campaigns `user` may read: by team, or the single campaign of an ingest key."""
    if is_ingest(user):
        return Campaign.objects.filter(pk=user.campaign_id)
    return Campaign.objects.for_user(user)


def campaign_for(request: Request, campaign_id: Any) -> Campaign:
    campaign: Campaign = get_object_or_404(campaigns_for(request.user), pk=campaign_id)
    return campaign


def runs_for(user: Any) -> Any:
    """The runs `user` may see: by team, or the runs of an ingest key's one campaign."""
    if is_ingest(user):
        return Run.objects.filter(campaign_id=user.campaign_id)
    if getattr(user, "is_superuser", False):
        return Run.objects.all()
    return Run.objects.filter(team_id__in=team_ids_for(user))


class AmbiguousRunId(exceptions.APIException):
    status_code = 409
    default_code = "ambiguous_run_id"


def run_for(request: Request, run_id: str, *, only: tuple[str, ...] = ()) -> Run:
    """The caller's run `run_id` (unique within a team); another team's run is 404. With
    `only`, just those fields (a write that locks and reads the run itself needs no more)."""
    found = runs_for(request.user).filter(run_id=run_id)
    found = found.only(*only) if only else found.select_related("campaign")
    runs: list[Run] = list(found[:2])
    if not runs:
        raise Http404("No such run.")
    if len(runs) > 1:
        # Only a member of several teams (or a superuser) can meet this; guessing would write
        # into the wrong team's run.
        raise AmbiguousRunId(
            f"run id {run_id!r} exists in several of your teams; use an ingest key or a token "
            "of a user in only one of them"
        )
    return runs[0]


NOT_NAMED = object()


def campaign_named_by(view: Any) -> Any:
    """The campaign id a route names (`id` on the campaigns routes, `campaign_id` elsewhere),
    or the one of the object it names when the view says (`ingest_campaign_id()`, None when no
    such object); NOT_NAMED for routes that name no campaign (lists, the calculator)."""
    hook = getattr(view, "ingest_campaign_id", None)
    if callable(hook):
        return hook()
    kwargs = getattr(view, "kwargs", None) or {}
    for name in ("campaign_id", "id"):
        if name in kwargs:
            return kwargs[name]
    return NOT_NAMED


INGEST_ONLY = (
    "An ingest key may only append run data to its one campaign (/api/v1/runs/… and its "
    "campaign's runs/, and /mlflow/): the schema, the docs and every other endpoint take a "
    "user's token or the admin session."
)


class PersonNotKey(permissions.BasePermission):
    """Signed-in people only: the OpenAPI schema and the docs page (SPECTACULAR_SETTINGS
    SERVE_PERMISSIONS). An ingest key is a training loop's credential; what it may call is the
    ingest paths, not the map of everything else."""

    message = INGEST_ONLY

    def has_permission(self, request: Request, view: Any) -> bool:
        user = request.user
        return bool(user and user.is_authenticated and not is_ingest(user))


class TeamRole(permissions.BasePermission):
    """Safe methods for members; others for planners/owners; ingest keys only where allowed."""

    message = "Your role on this team only allows reading."

    def has_permission(self, request: Request, view: Any) -> bool:
        user = request.user
        if not (user and user.is_authenticated):
            return False
        if is_ingest(user):
            # Permission instances are made per request, so the message can be set here.
            self.message = INGEST_ONLY
            methods = getattr(view, "ingest_methods", None)
            if getattr(view, "allow_ingest", False) and (
                methods is None or request.method in methods
            ):
                return True
            # Another campaign is out of the key's reach: 404 as for any caller (docs/api.md), not a
            # 403 that would confirm it exists. Its own campaign's other endpoints stay 403.
            named = campaign_named_by(view)
            if named is not NOT_NAMED and str(named) != str(getattr(user, "campaign_id", None)):
                raise Http404("Not found.")
            return False
        if request.method in permissions.SAFE_METHODS:
            return True
        # Object-level (team) checks happen per object; here: any writer membership at all.
        if getattr(user, "is_superuser", False) or team_ids_for(user, write=True):
            return True
        # A viewer in every team: on a route naming an object, look it up first, so another
        # team's object stays a 404 (docs/api.md) and the object check answers 403 for their own.
        return bool(getattr(view, "kwargs", None))

    def has_object_permission(self, request: Request, view: Any, obj: Any) -> bool:
        if request.method in permissions.SAFE_METHODS or is_ingest(request.user):
            return True
        team_id = getattr(obj, "team_id", None) or obj.campaign.team_id
        return Membership.objects.can_write(request.user, team_id)

"""The campaigns API (docs/api.md): planning through generic views, run logging through one small
view per action. Views stay thin: scoping lives in campaigns/api/permissions.py, planning writes in
campaigns/services/ (the admin calls the same functions), run data in
campaigns/services/ingest.py.

Tenancy: every lookup goes through `campaigns_for` / `campaign_for` / `run_for`, so another
team's object is a 404. Roles: `TeamRole` (viewers read, planners and owners write); ingest keys
only reach the views marked `allow_ingest`, and only their one campaign.
"""

from __future__ import annotations

from typing import Any

import orjson
from django.core.exceptions import RequestDataTooBig
from django.db import transaction
from django.http import HttpResponse, QueryDict
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import (
    OpenApiParameter,
    PolymorphicProxySerializer,
    extend_schema,
)
from rest_framework import generics
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from campaigns.api.bodies import Conflict
from campaigns.api.permissions import campaign_for, campaigns_for
from campaigns.api.run_actions import REFUSED, RunView, refused
from campaigns.api.serializers import (
    CampaignDetailSerializer,
    CampaignSerializer,
    CloseCampaignSerializer,
    ClosingRefusedSerializer,
    CommitCampaignSerializer,
    CommittedSerializer,
    DecisionSerializer,
    MetricBatchDocSerializer,
    MetricNamesSerializer,
    MetricsAcceptedSerializer,
    MetricSeriesSerializer,
    PlannedItemSerializer,
    RunCreateSerializer,
    RunDetailSerializer,
    RunSerializer,
    StageSerializer,
    StopRuleSerializer,
    stop_info,
)
from campaigns.domain import downsampling as series
from campaigns.models import Campaign, DecisionPoint, PlannedItem, Run, Stage, StopRule
from campaigns.selectors import run_cost, run_metrics
from campaigns.services import ingest, metric_batch
from campaigns.services.campaigns import (
    check_campaign_change,
    close_campaign,
    create_campaign,
    real_user,
    update_campaign,
)
from campaigns.services.decisions import record_decision
from campaigns.services.items import create_item
from campaigns.services.plans import check_draft, commit_plan
from campaigns.services.stages import add_stage
from campaigns.services.stop_rules import add_stop_rule


def _json(status: int, body: dict[str, Any]) -> HttpResponse:
    return HttpResponse(orjson.dumps(body), status=status, content_type="application/json")


# --- Campaigns -----------------------------------------------------------------------------


class CampaignList(generics.ListCreateAPIView[Campaign]):
    """Campaigns of your teams; create one in a team you plan in (`team`, needed only when you
    plan in several)."""

    serializer_class = CampaignSerializer

    def get_queryset(self) -> Any:
        return campaigns_for(self.request.user)

    def perform_create(self, serializer: Any) -> None:
        serializer.instance = create_campaign(
            acting_user=real_user(self.request.user), **serializer.validated_data
        )


class CampaignDetail(generics.RetrieveUpdateAPIView[Campaign]):
    """Read a campaign; edit it while it is a draft (after commit the plan is frozen: 409)."""

    serializer_class = CampaignDetailSerializer
    lookup_url_kwarg = "id"
    http_method_names = ["get", "patch", "head", "options"]

    def get_queryset(self) -> Any:
        return campaigns_for(self.request.user)

    def patch(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        with transaction.atomic():
            # Locked, so a commit cannot slip in between the draft check and the save.
            campaign = get_object_or_404(
                self.get_queryset().select_for_update(no_key=True, of=("self",)), pk=kwargs["id"]
            )
            self.check_object_permissions(request, campaign)
            if not campaign.is_draft and isinstance(request.data, dict):
                # The state conflict comes before the body's shape: after commit only what the
                # plan does not freeze may change (the admin allows the same).
                sent = {"corpus_name" if k == "corpus" else k for k in request.data}
                check_campaign_change(campaign, sent)
            serializer = self.get_serializer(campaign, data=request.data, partial=True)
            serializer.is_valid(raise_exception=True)
            campaign = update_campaign(
                campaign=campaign, acting_user=real_user(request.user), **serializer.validated_data
            )
        return Response(self.get_serializer(campaign).data)


class CommitCampaign(APIView):
    """Freeze the plan baseline. 409 with the missing requirements (`problems`), or when the
    campaign is already committed."""

    @extend_schema(request=CommitCampaignSerializer, responses={200: CommittedSerializer})
    def post(self, request: Request, id: int) -> Response:
        campaign = campaign_for(request, id)
        self.check_object_permissions(request, campaign)
        body = CommitCampaignSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        # CommitRefused / PlanFrozen / CommitOverTeamBudget → 409 (views.exception_handler)
        commit_plan(
            campaign=campaign,
            acting_user=real_user(request.user),
            over_team_budget=body.validated_data["over_team_budget"],
        )
        return Response(CommittedSerializer(campaign, context={"request": request}).data)


class CloseCampaign(APIView):
    """Close the campaign with its `conclusion` (a negative result is a conclusion). 409 while
    draft, when already closed, or naming the runs still running unless `stop_running`."""

    @extend_schema(
        request=CloseCampaignSerializer,
        responses={200: CampaignSerializer, 409: ClosingRefusedSerializer},
    )
    def post(self, request: Request, id: int) -> Response:
        campaign = campaign_for(request, id)
        self.check_object_permissions(request, campaign)
        body = CloseCampaignSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        campaign = close_campaign(
            campaign=campaign, acting_user=real_user(request.user), **body.validated_data
        )
        return Response(CampaignSerializer(campaign, context={"request": request}).data)


class CampaignChild:
    """For /campaigns/{id}/…: the campaign, found in the caller's scope and role-checked once."""

    kwargs: dict[str, Any]

    def get_campaign(self) -> Campaign:
        if not hasattr(self, "_campaign"):
            request: Request = self.request  # type: ignore[attr-defined]
            campaign = campaign_for(request, self.kwargs["id"])
            self.check_object_permissions(request, campaign)  # type: ignore[attr-defined]
            self._campaign = campaign
        return self._campaign

    def get_serializer_context(self) -> dict[str, Any]:
        context: dict[str, Any] = super().get_serializer_context()  # type: ignore[misc]
        if not getattr(self, "swagger_fake_view", False):
            context["campaign"] = self.get_campaign()
        return context


class CampaignVariants(CampaignChild, generics.ListCreateAPIView[PlannedItem]):
    """Planned items: baseline, variants, data and resume checks. After commit an item is
    added as an amendment and needs `amendment_reason`."""

    serializer_class = PlannedItemSerializer

    def get_queryset(self) -> Any:
        return PlannedItem.objects.filter(campaign=self.get_campaign())

    def perform_create(self, serializer: Any) -> None:
        data = dict(serializer.validated_data)
        serializer.instance = create_item(
            campaign=self.get_campaign(),
            acting_user=real_user(self.request.user),
            amendment_reason=data.pop("amendment_reason", ""),
            **data,
        )


class CampaignStopRules(CampaignChild, generics.ListCreateAPIView[StopRule]):
    """Stop rules, written before the runs; 409 once the plan is committed."""

    serializer_class = StopRuleSerializer

    def get_queryset(self) -> Any:
        return StopRule.objects.filter(campaign=self.get_campaign())

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        # The state conflict (409) comes before the body's shape (400).
        check_draft(self.get_campaign(), "stop rules")
        return super().create(request, *args, **kwargs)

    def perform_create(self, serializer: Any) -> None:
        serializer.instance = add_stop_rule(
            campaign=self.get_campaign(),
            acting_user=real_user(self.request.user),
            **serializer.validated_data,
        )


class CampaignDecisions(CampaignChild, generics.ListCreateAPIView[DecisionPoint]):
    """Decision points (after the pilot: continue, cut optional variants, revise the question),
    recorded with who, when and why."""

    serializer_class = DecisionSerializer

    def get_queryset(self) -> Any:
        return DecisionPoint.objects.filter(campaign=self.get_campaign()).prefetch_related(
            "cut_variants"
        )

    def perform_create(self, serializer: Any) -> None:
        data = serializer.validated_data
        serializer.instance = record_decision(
            campaign=self.get_campaign(),
            outcome=data["outcome"],
            rationale=data["rationale"],
            acting_user=real_user(self.request.user),
            cut_variants=list(data.get("cut_variants", [])),
            label=data.get("label") or "after the pilot",
        )


class CampaignStages(CampaignChild, generics.ListCreateAPIView[Stage]):
    """Calendar stages of the plan; added while drafting (after commit the plan is frozen and
    observed hours go to /stages/{sid}/observed/)."""

    serializer_class = StageSerializer

    def get_queryset(self) -> Any:
        return Stage.objects.filter(campaign=self.get_campaign()).prefetch_related("depends_on")

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        check_draft(self.get_campaign(), "calendar stages")
        return super().create(request, *args, **kwargs)

    def perform_create(self, serializer: Any) -> None:
        data = dict(serializer.validated_data)
        serializer.instance = add_stage(
            campaign=self.get_campaign(),
            acting_user=real_user(self.request.user),
            depends_on=list(data.pop("depends_on", [])),
            **data,
        )


class CampaignRuns(CampaignChild, generics.ListCreateAPIView[Run]):
    """Runs of a campaign. POST creates one, or answers the same run again (200) for the same
    `run_id` and config; another config under that id is a 409."""

    serializer_class = RunSerializer
    allow_ingest = True
    ingest_methods = frozenset({"POST"})  # an ingest key appends; it does not browse

    def get_queryset(self) -> Any:
        return Run.objects.filter(campaign=self.get_campaign()).select_related("stop_rule")

    @extend_schema(
        request=RunCreateSerializer,
        responses={201: RunDetailSerializer, 200: RunDetailSerializer},
    )
    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        campaign = self.get_campaign()
        serializer = RunCreateSerializer(data=request.data, context=self.get_serializer_context())
        serializer.is_valid(raise_exception=True)
        try:
            run, created = ingest.open_run(campaign, **serializer.validated_data)
        except (ingest.RunIdTaken, ingest.CampaignNotOpen) as exc:
            raise Conflict(str(exc)) from exc
        return Response(RunDetailSerializer(run).data, status=201 if created else 200)


# --- Runs ----------------------------------------------------------------------------------


class RunMetrics(RunView):
    """Read the run's metrics, or append up to 10,000 points and apply the stop rules.

    The write is the fast path of the API: the body is parsed with orjson and checked without
    serializers, and the points go to the database in one COPY (PostgreSQL).
    """

    @extend_schema(
        parameters=[
            OpenApiParameter("name", str, description="One metric: its series, downsampled."),
            OpenApiParameter(
                "x",
                str,
                enum=["step", "cost"],
                description="`cost` adds each point's cost so far (`cost`, a decimal string in "
                "the campaign's currency, or null when nothing prices an hour).",
            ),
            OpenApiParameter(
                "max_points",
                int,
                description=f"At most this many points (2 to {run_metrics.LIMIT_MAX_POINTS}, "
                f"default {run_metrics.DEFAULT_MAX_POINTS}); each bucket keeps its minimum and "
                "maximum, every non-finite point and the last point are kept.",
            ),
        ],
        responses={
            200: PolymorphicProxySerializer(
                component_name="RunMetricsRead",
                serializers=[MetricNamesSerializer, MetricSeriesSerializer],
                resource_type_field_name=None,
            )
        },
    )
    def get(self, request: Request, run_id: str) -> HttpResponse:
        """Without `name`: the run's metric names with counts. With it: that series."""
        run = self.get_run()
        name = request.query_params.get("name")
        # Parameters are checked whether or not `name` is given: an invalid one is a 400 either
        # way, never silently ignored.
        params = _series_params(request.query_params)
        if isinstance(params, HttpResponse):
            return params
        max_points, x = params
        if name is None:
            names = run_metrics.metric_names(run)
            return _json(
                200,
                {
                    "run_id": run.run_id,
                    "metrics": [{"name": n, "count": c} for n, c in names],
                },
            )
        found = run_metrics.metric_series(run, name, max_points)
        return _json(
            200,
            {
                "run_id": run.run_id,
                "name": name,
                "count": found.count,
                "returned": len(found.points),
                "max_points": max_points,
                "points": _series_points(run, name, found.points, with_cost=x == "cost"),
            },
        )

    @extend_schema(
        request=MetricBatchDocSerializer,
        responses={201: MetricsAcceptedSerializer, 409: REFUSED},
    )
    def post(self, request: Request, run_id: str) -> HttpResponse:
        # The batch locks and reads the whole run itself (ingest.append_metrics): the permission
        # check needs only its team, so the hot path parses the run's config once, not twice.
        run = self.get_run(only=("team", "campaign", "run_id"))
        media_type = (request.content_type or "").split(";")[0].strip().lower()
        if media_type != "application/json" and not media_type.endswith("+json"):
            return _json(415, {"detail": f'Unsupported media type "{media_type}" in request.'})
        try:
            points = metric_batch.read_metric_batch(request.body)
        except RequestDataTooBig:
            return _json(413, {"detail": "The request body is too large."})
        except metric_batch.BatchRefused as exc:
            return _json(exc.status, exc.body)
        try:
            appended = ingest.append_metrics(run, points)
        except ingest.RunRefused as exc:
            return refused(exc)
        stop = stop_info(appended.run)
        return _json(
            201, {"accepted": appended.accepted, "stopped": stop is not None, "stop": stop}
        )


def _series_params(query: QueryDict) -> tuple[int, str] | HttpResponse:
    """`max_points` (2 to the limit) and `x` (step or cost), or the 400 naming the first bad one."""
    raw = query.get("max_points", str(run_metrics.DEFAULT_MAX_POINTS))
    try:
        max_points = int(raw)
    except ValueError:
        max_points = 0
    if not 2 <= max_points <= run_metrics.LIMIT_MAX_POINTS:
        return _json(
            400,
            {
                "max_points": [
                    f"A whole number from 2 to {run_metrics.LIMIT_MAX_POINTS}; got {raw!r}."
                ]
            },
        )
    x = query.get("x", "step")
    if x not in ("step", "cost"):
        return _json(400, {"x": [f'"step" (the default) or "cost"; got {x!r}.']})
    return max_points, x


def _series_points(
    run: Run, name: str, found: list[series.Point], *, with_cost: bool
) -> list[dict[str, Any]]:
    """The series' points as JSON: step and value, what the client said, the cost so far."""
    points: list[dict[str, Any]] = [
        {"step": step, "value": series.as_json_value(value)} for step, value in found
    ]
    # What an MLflow client said of each point (docs/mlflow.md): only where it said it.
    for point, (stamp, model_id) in zip(
        points, run_metrics.client_marks(run, name, found), strict=True
    ):
        if stamp is not None:
            point["timestamp"] = stamp
        if model_id:
            point["model_id"] = model_id
    if with_cost:
        # Each point's cost so far, so a loss-vs-money curve needs no client arithmetic
        # (docs/domain.md §18); null where nothing prices an hour in this campaign.
        priced = run_cost.point_costs(run, run_metrics.logged_at(run, name, found))
        costs: list[Any] = list(priced) if priced is not None else [None] * len(points)
        for point, cost in zip(points, costs, strict=True):
            point["cost"] = None if cost is None else str(cost)
    return points

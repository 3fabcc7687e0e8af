"""/api/v1/runs/{run_id}/… (docs/api.md): the run, and one small view per action on it:
throughput, checkpoints, the heartbeat, the stop, the finish with measured hours, and a
person's correction of the hours (docs/domain.md §5.8). Each parses, calls one service, and
answers; what the run's state refuses is a 409 saying the state. The metrics (the hot path)
are in views.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from campaigns.api.authentication import is_ingest
from campaigns.api.permissions import run_for, runs_for
from campaigns.api.serializers import (
    CheckpointSerializer,
    CorrectHoursSerializer,
    FinishRunSerializer,
    HeartbeatAnswerSerializer,
    HeartbeatSerializer,
    RunDetailSerializer,
    RunRefusedSerializer,
    StopRunSerializer,
    ThroughputSerializer,
    stop_info,
)
from campaigns.models import Checkpoint, Run
from campaigns.services import checkpoints, ingest, run_hours, run_lifecycle


def refused(exc: ingest.RunRefused) -> Response:
    """409 for a write the run's state refuses, saying what the state is (and the stop)."""
    run = exc.run
    return Response(
        {"detail": str(exc), "run_id": run.run_id, "status": run.status, "stop": stop_info(run)},
        status=409,
    )


REFUSED = OpenApiResponse(RunRefusedSerializer, description="The run is stopped or finished.")


class RunView(APIView):
    """Base of /runs/{run_id}/…: ingest keys welcome (their campaign's runs only)."""

    allow_ingest = True

    def get_run(self, *, only: tuple[str, ...] = ()) -> Run:
        run = run_for(self.request, self.kwargs["run_id"], only=only)
        self.check_object_permissions(self.request, run)
        return run

    def write(
        self,
        body: type[serializers.Serializer[Any]],
        action: Callable[..., Any],
        shown: type[serializers.BaseSerializer[Any]],
        status: int = 200,
    ) -> Response:
        """Validate the body, then `action(run, **fields)`; what the run's state refuses is 409
        (`_refused`), what it made is shown by `shown`."""
        run = self.get_run()
        serializer = body(data=self.request.data, context={"run": run})
        serializer.is_valid(raise_exception=True)
        try:
            made = action(run, **serializer.validated_data)
        except ingest.RunRefused as exc:
            return refused(exc)
        return Response(shown(made).data, status=status)


class RunDetail(RunView):
    @extend_schema(responses={200: RunDetailSerializer})
    def get(self, request: Request, run_id: str) -> Response:
        """The run: status, stop (rule, reason, step, at) and latest figures."""
        return Response(RunDetailSerializer(self.get_run()).data)


class RunThroughput(RunView):
    @extend_schema(
        request=ThroughputSerializer, responses={201: ThroughputSerializer, 409: REFUSED}
    )
    def post(self, request: Request, run_id: str) -> Response:
        """Measured throughput: samples or tokens per second over `gpus` GPUs."""
        return self.write(
            ThroughputSerializer, ingest.record_throughput, ThroughputSerializer, status=201
        )


class RunCheckpoints(RunView):
    @extend_schema(
        request=CheckpointSerializer, responses={201: CheckpointSerializer, 409: REFUSED}
    )
    def post(self, request: Request, run_id: str) -> Response:
        """A checkpoint; one that is no usable resume fires the `no_usable_resume` rule."""

        def record(run: Run, **facts: Any) -> Checkpoint:
            checkpoint, _firing = checkpoints.record_checkpoint(run, **facts)
            return checkpoint

        return self.write(CheckpointSerializer, record, CheckpointSerializer, status=201)


class RetrievedCheckpoint(RunView):
    @extend_schema(request=None, responses={200: CheckpointSerializer})
    def post(self, request: Request, run_id: str, id: int) -> Response:
        """Mark the checkpoint copied off the rented machine (no body; marking twice is a
        no-op): its `checkpoint_not_retrieved` alert resolves at the next scan."""
        run = self.get_run()
        try:
            checkpoint = checkpoints.mark_checkpoint_retrieved(run, id)
        except Checkpoint.DoesNotExist as exc:
            raise NotFound("no such checkpoint on this run") from exc
        return Response(CheckpointSerializer(checkpoint).data)


def _acting(request: Request) -> Any:
    """The person behind the request; None for an ingest key (a training loop)."""
    user = request.user
    return None if is_ingest(user) or not getattr(user, "pk", None) else user


class RunHeartbeat(RunView):
    @extend_schema(
        request=HeartbeatSerializer, responses={200: HeartbeatAnswerSerializer, 409: REFUSED}
    )
    def post(self, request: Request, run_id: str) -> Response:
        """The loop is alive (`gpus`: the GPUs it runs on). A run not heard from for a multiple
        of its heartbeat interval is ended as failed at its last heartbeat; one the sweep ended
        that beats again goes on in a new segment. Send it without an Idempotency-Key."""

        def beat(run: Run, **fields: Any) -> Run:
            return run_lifecycle.record_heartbeat(run=run, acting_user=_acting(request), **fields)

        return self.write(HeartbeatSerializer, beat, HeartbeatAnswerSerializer)


class StopRun(RunView):
    @extend_schema(request=StopRunSerializer, responses={200: RunDetailSerializer, 409: REFUSED})
    def post(self, request: Request, run_id: str) -> Response:
        """Stop the run by hand: `reason` (required) and the `rule` applied, if any."""

        def stop(run: Run, **fields: Any) -> Run:
            return run_lifecycle.stop_run(run=run, acting_user=_acting(request), **fields)

        return self.write(StopRunSerializer, stop, RunDetailSerializer)


class FinishRun(RunView):
    @extend_schema(request=FinishRunSerializer, responses={200: RunDetailSerializer, 409: REFUSED})
    def post(self, request: Request, run_id: str) -> Response:
        """Close the run as completed or failed at `ended_at` (default now): its hours are
        measured (its end − its start, earlier segments added), or the `observed_hours` sent
        (kept as stated). A stopped run stays stopped; its hours still count."""

        def finish(run: Run, **fields: Any) -> Run:
            return run_lifecycle.finish_run(run=run, acting_user=_acting(request), **fields)

        return self.write(FinishRunSerializer, finish, RunDetailSerializer)


class RunObservedHours(RunView):
    """A person corrects an ended run's hours with a reason (planners and owners; not an
    ingest key). Kept with who, when, before and after; refused on a closed campaign (409)."""

    allow_ingest = False

    def ingest_campaign_id(self) -> Any:
        # An ingest key's other campaigns' runs stay a 404; its own answer 403.
        found = runs_for(self.request.user).filter(run_id=self.kwargs["run_id"])
        return found.values_list("campaign_id", flat=True).first()

    @extend_schema(
        request=CorrectHoursSerializer,
        responses={
            200: RunDetailSerializer,
            409: OpenApiResponse(
                REFUSED.response, description="The run is still running, or its campaign closed."
            ),
        },
    )
    def post(self, request: Request, run_id: str) -> Response:
        """Set the run's `observed_hours` (what its figures and cost count) to the corrected
        figure, saying why in `observed_reason`."""

        def correct(run: Run, *, observed_hours: Any, observed_reason: str) -> Run:
            correction = run_hours.correct_run_hours(
                run=run, hours=observed_hours, reason=observed_reason, acting_user=_acting(request)
            )
            return Run.objects.get(pk=correction.run_id)

        return self.write(CorrectHoursSerializer, correct, RunDetailSerializer)

"""A run's actions on its clock and its end (docs/api.md): the heartbeat, the stop, the finish
with measured hours, and a person's correction of the hours (docs/domain.md §5.8). Each parses,
calls one service of campaigns/services/run_lifecycle.py or run_hours.py, and answers."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from campaigns.api.authentication import is_ingest
from campaigns.api.permissions import runs_for
from campaigns.api.serializers import (
    CorrectHoursSerializer,
    FinishRunSerializer,
    HeartbeatAnswerSerializer,
    HeartbeatSerializer,
    RunDetailSerializer,
    StopRunSerializer,
)
from campaigns.api.views import REFUSED, RunView
from campaigns.models import Run
from campaigns.services import run_hours, run_lifecycle


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

"""A run's stop: how every run-facing answer shows it (``stop_info``, with the grace of
docs/domain.md §4.6), the request to stop a run, and the 409 a stopped or finished run answers.
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from campaigns.api.fields import (
    StrictCharField,
    StrictIntegerField,
    StrictPrimaryKeyRelatedField,
)
from campaigns.api.serializers.base import BIGINT_MAX, scope
from campaigns.domain import stop_rules
from campaigns.models import (
    Run,
    StopRule,
)


class StopInfoSerializer(serializers.Serializer[Any]):
    rule = StrictIntegerField(allow_null=True, help_text="The stop rule's id; null by hand.")
    kind = StrictCharField(allow_null=True)
    reason = StrictCharField()
    step = StrictIntegerField(allow_null=True)
    at = serializers.DateTimeField(allow_null=True)
    grace_steps = StrictIntegerField(help_text="The rule's grace in steps (0: none).")
    grace_minutes = StrictIntegerField(help_text="The rule's grace in minutes (0: none).")
    grace_until_step = StrictIntegerField(
        allow_null=True, help_text="The last step the run still takes; null without step grace."
    )
    grace_seconds_left = serializers.FloatField(
        allow_null=True,
        help_text="Seconds of the grace's minutes left (0 when over); null without them.",
    )


def stop_info(run: Run) -> dict[str, Any] | None:
    """The run's stop as the API shows it, or None while it was not stopped. The grace
    (docs/domain.md §4.6) is the rule's; the seconds left are counted on the server's clock, so
    a loop on another machine needs no synchronised clock."""
    if run.status != "stopped":
        return None
    grace = run.stop_rule.grace if run.stop_rule is not None else stop_rules.NO_GRACE
    since = (timezone.now() - run.stopped_at).total_seconds() if run.stopped_at else 0.0
    return {
        "rule": run.stop_rule_id,
        "kind": run.stop_rule.kind if run.stop_rule is not None else None,
        "reason": run.stop_reason,
        "step": run.stop_step,
        "at": serializers.DateTimeField().to_representation(run.stopped_at)
        if run.stopped_at
        else None,
        "grace_steps": grace.steps,
        "grace_minutes": grace.minutes,
        "grace_until_step": stop_rules.grace_until_step(grace, run.stop_step),
        "grace_seconds_left": stop_rules.grace_seconds_left(grace, since),
    }


# The `stopped` and `stop` figures of an answer about a run (the run itself, a throughput sample
# or a checkpoint it reported), so a loop learns from any write that its run was stopped; the
# serializer declares the two SerializerMethodFields, `_run` says which run. A comment, not a
# docstring: drf-spectacular would take it as the description of a serializer that has none.
class RunStopFigures:
    def _run(self, reported: Any) -> Run:
        run: Run = reported.run
        return run

    def get_stopped(self, reported: Any) -> bool:
        return self._run(reported).status == "stopped"

    @extend_schema_field(StopInfoSerializer(allow_null=True))
    def get_stop(self, reported: Any) -> dict[str, Any] | None:
        return stop_info(self._run(reported))


class StopRunSerializer(serializers.Serializer[Any]):
    rule = StrictPrimaryKeyRelatedField(
        queryset=StopRule.objects.none(),
        required=False,
        allow_null=True,
        help_text="The stop rule applied, if any (a rule of the run's campaign).",
    )
    reason = StrictCharField(max_length=2000)
    step = StrictIntegerField(min_value=0, max_value=BIGINT_MAX, required=False, allow_null=True)

    def get_fields(self) -> dict[str, Any]:
        fields = super().get_fields()
        run = self.context.get("run")
        if run is not None:
            scope(fields["rule"], StopRule.objects.filter(campaign_id=run.campaign_id))
        return fields


class RunRefusedSerializer(serializers.Serializer[Any]):
    detail = StrictCharField()
    run_id = StrictCharField()
    status = StrictCharField()
    stop = StopInfoSerializer(allow_null=True)

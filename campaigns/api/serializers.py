"""Serializers of the campaigns API. Every one lists its fields.

Metric points have no serializer on the hot path (see campaigns/services/ingest.py and
`RunMetrics` in campaigns/api/views.py); the ones below named *Doc* only describe that endpoint in
the OpenAPI document.
"""

from __future__ import annotations

import re
from typing import Any

from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from campaigns.api import estimate_spec
from campaigns.api.fields import (
    FiniteFloatField,
    HoursField,
    IdentifierField,
    JSONObjectField,
    MetricValueField,
    MoneyField,
    StrictBooleanField,
    StrictCharField,
    StrictIntegerField,
    StrictModelSerializer,
    StrictPrimaryKeyRelatedField,
    StrictRegexField,
    json_metric_value,
)
from campaigns.domain import item_fate as fates
from campaigns.domain import stop_rules as rules
from campaigns.domain.observed_hours import (
    FROM_RUNS,
    RECORDED,
    RECORDED_OVER_RUNS,
    Reconciled,
    StageObserved,
)
from campaigns.models import (
    WORK_FIELDS,
    Campaign,
    Checkpoint,
    DecisionPoint,
    ItemStatus,
    Outcome,
    PlannedItem,
    Run,
    RunArtifact,
    RunKind,
    RunSegment,
    Stage,
    StopRule,
    Team,
    ThroughputSample,
    team_ids_for,
)
from campaigns.selectors import run_cost as accrual
from campaigns.selectors import run_metrics as readings
from campaigns.selectors.observed_hours import reconciled_for
from campaigns.selectors.plan_summary import campaign_figures

BIGINT_MAX = 2**63 - 1
INT_MAX = 2**31 - 1
MAX_POINTS = 10_000
RUN_ID_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._:+=@~-]{0,199}"


# --- Fields --------------------------------------------------------------------------------


def _scope(field: Any, queryset: Any) -> None:
    """Narrow a related field (or the child of a many=True one) to `queryset`."""
    target = field.child_relation if isinstance(field, serializers.ManyRelatedField) else field
    target.queryset = queryset


# --- Campaign planning ---------------------------------------------------------------------


class WritableTeamField(StrictPrimaryKeyRelatedField[Team]):
    """A team the caller plans in; any other id reads as unknown (tenancy: no hint it exists)."""

    def get_queryset(self) -> Any:
        request = self.context["request"]
        if request.user.is_superuser:
            return Team.objects.all()
        return Team.objects.filter(pk__in=team_ids_for(request.user, write=True))


class CampaignCorpusSerializer(serializers.Serializer[Campaign]):
    name = IdentifierField(source="corpus_name", max_length=200)
    revision = IdentifierField(
        source="corpus_revision",
        max_length=200,
        help_text="Exact revision or hash of the fixed corpus, as the client spells it.",
    )


class InheritedUncertaintySerializer(serializers.Serializer[Any]):
    kind = serializers.ChoiceField(
        choices=["deviation", "cut_item", "failed_check", "calibrated_hours"]
    )
    subject = serializers.CharField()
    text = serializers.CharField()


class CampaignSerializer(StrictModelSerializer[Campaign]):
    team = WritableTeamField(required=False)
    closed_by: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )
    corpus = CampaignCorpusSerializer(source="*")
    budget = MoneyField(
        max_digits=14, decimal_places=2, min_value=0, allow_null=True, required=False
    )
    window_hours = HoursField(required=False)
    inherited_uncertainties = serializers.ListField(
        child=InheritedUncertaintySerializer(),
        read_only=True,
        help_text="What the campaign it was planned from left open (docs/domain.md §21).",
    )
    hourly_rate_per_gpu = MoneyField(
        max_digits=14,
        decimal_places=2,
        min_value=0,
        allow_null=True,
        required=False,
        help_text="Price of one GPU-hour when paying by the hour rather than by lots "
        "(docs/domain.md §18).",
    )
    required_checkpoint_components = serializers.ListField(
        child=serializers.ChoiceField(choices=rules.COMPONENT_ORDER), required=False
    )

    class Meta:
        model = Campaign
        fields = [
            "id",
            "team",
            "title",
            "question",
            "corpus",
            "expected_deliverables",
            "decision_threshold",
            "window_hours",
            "budget",
            "currency",
            "hourly_rate_per_gpu",
            "required_checkpoint_components",
            "planned_from",
            "inherited_uncertainties",
            "status",
            "conclusion",
            "created_at",
            "committed_at",
            "closed_at",
            "closed_by",
        ]
        read_only_fields = [
            "id",
            "planned_from",
            "inherited_uncertainties",
            "status",
            "conclusion",
            "created_at",
            "committed_at",
            "closed_at",
            "closed_by",
        ]

    def get_fields(self) -> dict[str, Any]:
        fields = super().get_fields()
        if self.instance is not None or self.partial:
            # A campaign never moves to another team: its ledger and runs belong to this one.
            # (A PATCH's team is ignored, and the schema's PatchedCampaign has none.)
            fields["team"] = StrictPrimaryKeyRelatedField(read_only=True)
        if self.partial:
            # A PATCH may change the revision alone (DRF skips the nested required fields of a
            # partial update); a partial corpus makes the schema say so (PatchedCampaignCorpus).
            fields["corpus"] = CampaignCorpusSerializer(source="*", partial=True)
        return fields

    def validate_required_checkpoint_components(self, value: list[str]) -> list[str]:
        return [c for c in rules.COMPONENT_ORDER if c in set(value)]

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if self.instance is None and "team" not in attrs:
            request = self.context["request"]
            teams = team_ids_for(request.user, write=True)
            if len(teams) != 1:
                raise serializers.ValidationError(
                    {"team": ["Say which team plans this campaign (you plan in several)."]}
                )
            attrs["team"] = Team.objects.get(pk=teams[0])
        return attrs


class PlannedItemSerializer(StrictModelSerializer[PlannedItem]):
    config = JSONObjectField(required=False)
    estimate_spec = JSONObjectField(
        required=False,
        allow_null=True,
        help_text="The preview's model, training and hardware objects (POST /estimates/preview/"
        "), checked by the same serializers; the forecast and the hardware options use it.",
    )
    epochs = FiniteFloatField(required=False, allow_null=True, min_value=0.001, max_value=1e6)
    assumed_tokens_per_second = FiniteFloatField(
        required=False, allow_null=True, min_value=0.001, max_value=1e12
    )
    assumed_samples_per_second = FiniteFloatField(
        required=False, allow_null=True, min_value=0.001, max_value=1e12
    )
    planned_hours = HoursField(required=False)
    prep_hours = HoursField(required=False)
    amendment_reason = StrictCharField(
        write_only=True,
        required=False,
        allow_blank=True,
        help_text="Required once the plan is committed: why this item is added.",
    )
    status = serializers.SerializerMethodField(
        help_text="planned, done, cut or stopped: from the fate (campaigns/domain/item_fate.py)."
    )
    fate = serializers.SerializerMethodField(
        help_text="done, cut, stopped, running, failed or planned, from the item's full runs "
        "(pilots do not settle an item); the closing report says the same."
    )

    class Meta:
        model = PlannedItem
        fields = [
            "id",
            "name",
            "role",
            "tier",
            "config",
            "planned_hours",
            "prep_hours",
            "rationale",
            "gpu",
            *WORK_FIELDS,
            "estimate_spec",
            "status",
            "fate",
            "amendment_reason",
        ]
        read_only_fields = ["id", "status", "fate"]

    def validate_estimate_spec(self, value: dict[str, Any] | None) -> dict[str, Any] | None:
        return estimate_spec.validate(value)

    @extend_schema_field(serializers.ChoiceField(choices=["planned", "done", "cut", "stopped"]))
    def get_status(self, item: PlannedItem) -> str:
        return fates.status_of(readings.fate_of(item))

    @extend_schema_field(serializers.ChoiceField(choices=list(fates.FATES)))
    def get_fate(self, item: PlannedItem) -> str:
        return readings.fate_of(item)


class StopRuleSerializer(StrictModelSerializer[StopRule]):
    threshold = FiniteFloatField(required=False, allow_null=True)
    metric = IdentifierField(max_length=100, required=False, allow_blank=True)

    class Meta:
        model = StopRule
        fields = [
            "id",
            "kind",
            "metric",
            "comparator",
            "threshold",
            "description",
            "grace_steps",
            "grace_minutes",
            "created_at",
        ]
        read_only_fields = ["id", "created_at"]


class DecisionSerializer(StrictModelSerializer[DecisionPoint]):
    outcome = serializers.ChoiceField(
        choices=[Outcome.CONTINUE, Outcome.CUT, Outcome.REVISE],
        help_text="continue, cut (optional variants) or revise (the question).",
    )
    rationale = StrictCharField()
    cut_variants = StrictPrimaryKeyRelatedField(
        many=True, required=False, queryset=PlannedItem.objects.none()
    )
    decided_by: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )

    class Meta:
        model = DecisionPoint
        fields = [
            "id",
            "label",
            "outcome",
            "rationale",
            "cut_variants",
            "decided_by",
            "decided_at",
            "created_at",
        ]
        read_only_fields = ["id", "decided_by", "decided_at", "created_at"]

    def get_fields(self) -> dict[str, Any]:
        fields = super().get_fields()
        campaign = self.context.get("campaign")
        if campaign is not None:
            # Only this campaign's items can be cut here; any other id is "does not exist".
            _scope(fields["cut_variants"], PlannedItem.objects.filter(campaign=campaign))
        return fields


class PlanFiguresSerializer(serializers.Serializer[Any]):
    """The plan's four hour figures (docs/domain.md §8.5), decimal strings."""

    work_hours = serializers.CharField(help_text="Planned machine hours of the items not cut.")
    gpu_hours = serializers.CharField(help_text="Each item's work hours × its GPUs.")
    calendar_hours = serializers.CharField(help_text="The calendar's length, first stage to last.")
    lot_hours = serializers.CharField(help_text="Rental time reserved: lot duration × quantity.")
    window_hours = serializers.CharField()
    observed_hours = serializers.CharField(
        allow_null=True,
        help_text="The stages' observed hours (from their runs, typed where none) plus the runs "
        "tied to no stage; null while nothing was observed.",
    )


class CampaignDetailSerializer(CampaignSerializer):
    """A campaign as `GET /campaigns/{id}/` answers it: with its plan's hour figures."""

    plan_figures = serializers.SerializerMethodField()

    class Meta(CampaignSerializer.Meta):
        fields = [*CampaignSerializer.Meta.fields, "plan_figures"]
        read_only_fields = [*CampaignSerializer.Meta.read_only_fields, "plan_figures"]

    @extend_schema_field(PlanFiguresSerializer)
    def get_plan_figures(self, campaign: Campaign) -> dict[str, str]:
        return campaign_figures(campaign).as_json()


# A stage's one observed figure, reconciled with its runs (docs/domain.md §8.6), as the stage
# serializers show it; `_seen` says where the reconciliation comes from. A comment, not a
# docstring: drf-spectacular would take it as the description of a serializer that has none.
class ObservedFigures:
    def _seen(self, stage: Stage) -> StageObserved | None:
        raise NotImplementedError

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_observed_hours(self, stage: Stage) -> str | None:
        seen = self._seen(stage)
        return None if seen is None or seen.hours is None else f"{seen.hours:.2f}"

    @extend_schema_field(
        serializers.ChoiceField(choices=[FROM_RUNS, RECORDED, RECORDED_OVER_RUNS], allow_null=True)
    )
    def get_observed_source(self, stage: Stage) -> str | None:
        seen = self._seen(stage)
        return None if seen is None else seen.source

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_runs_observed_hours(self, stage: Stage) -> str | None:
        seen = self._seen(stage)
        return None if seen is None or seen.runs_hours is None else f"{seen.runs_hours:.2f}"


class StageSerializer(ObservedFigures, StrictModelSerializer[Stage]):
    variant = StrictPrimaryKeyRelatedField(
        queryset=PlannedItem.objects.none(), required=False, allow_null=True
    )
    depends_on = StrictPrimaryKeyRelatedField(
        many=True, required=False, queryset=Stage.objects.none()
    )
    planned_hours = HoursField(required=False)
    resource = IdentifierField(
        max_length=60,
        required=False,
        allow_blank=True,
        help_text="Which GPU or lot it occupies, e.g. 'rtx4090-a'.",
    )

    # The stage's one observed figure, reconciled with its runs (docs/domain.md §8.6).
    observed_hours = serializers.SerializerMethodField()
    observed_source = serializers.SerializerMethodField()
    runs_observed_hours = serializers.SerializerMethodField()
    observed_reason = serializers.CharField(read_only=True)

    class Meta:
        model = Stage
        fields = [
            "id",
            "name",
            "kind",
            "machine",
            "resource",
            "variant",
            "planned_hours",
            "depends_on",
            "observed_hours",
            "observed_source",
            "runs_observed_hours",
            "observed_reason",
            "deviation_note",
            "observed_at",
        ]
        read_only_fields = [
            "id",
            "observed_hours",
            "observed_source",
            "runs_observed_hours",
            "observed_reason",
            "deviation_note",
            "observed_at",
        ]

    def _seen(self, stage: Stage) -> StageObserved | None:
        # Reconciled once per campaign for a whole list (two queries), not once per stage.
        cache: dict[int, Reconciled] = self.context.setdefault("_observed", {})
        if stage.campaign_id not in cache:
            cache[stage.campaign_id] = reconciled_for([stage.campaign_id])[stage.campaign_id]
        return cache[stage.campaign_id].stages.get(stage.pk)

    def get_fields(self) -> dict[str, Any]:
        fields = super().get_fields()
        campaign = self.context.get("campaign")
        if campaign is not None:
            # Stages depend on stages of the same campaign and run its items, nothing else.
            _scope(fields["variant"], PlannedItem.objects.filter(campaign=campaign))
            _scope(fields["depends_on"], Stage.objects.filter(campaign=campaign))
        return fields


# --- Runs ----------------------------------------------------------------------------------


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
    grace = run.stop_rule.grace if run.stop_rule is not None else rules.NO_GRACE
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
        "grace_until_step": rules.grace_until_step(grace, run.stop_step),
        "grace_seconds_left": rules.grace_seconds_left(grace, since),
    }


class RunCreateSerializer(serializers.Serializer[Any]):
    run_id = StrictRegexField(
        f"^{RUN_ID_PATTERN}$",
        max_length=200,
        trim_whitespace=False,  # "run\n" is refused, not quietly made "run"
        help_text="Chosen by the client, unique within the team: letters, digits and ._:+=@~-",
        error_messages={
            "invalid": "Use letters, digits and . _ : + = @ ~ - (it goes in URLs), "
            "starting with a letter or digit."
        },
    )
    variant = StrictPrimaryKeyRelatedField(
        queryset=PlannedItem.objects.none(), required=False, allow_null=True
    )
    kind = serializers.ChoiceField(choices=RunKind.choices, default=RunKind.FULL)
    gpus = StrictIntegerField(
        min_value=1,
        max_value=INT_MAX,
        default=1,
        help_text="GPUs the run occupies: its cost is its hours × GPUs × the campaign's rate.",
    )
    config = JSONObjectField(required=False, default=dict)

    def get_fields(self) -> dict[str, Any]:
        fields = super().get_fields()
        campaign = self.context.get("campaign")
        if campaign is not None:
            _scope(fields["variant"], PlannedItem.objects.filter(campaign=campaign))
        return fields

    def validate_run_id(self, value: str) -> str:
        # RegexField searches; "$" would still let a trailing newline through.
        if not run_id_is_valid(value):
            raise serializers.ValidationError(self.fields["run_id"].error_messages["invalid"])
        return value

    def validate_variant(self, item: PlannedItem | None) -> PlannedItem | None:
        if item is not None and item.status == ItemStatus.CUT:
            raise serializers.ValidationError(f"'{item.name}' was cut by a decision.")
        return item


class RunSerializer(StrictModelSerializer[Run]):
    campaign: serializers.PrimaryKeyRelatedField[Campaign] = StrictPrimaryKeyRelatedField(
        read_only=True
    )
    variant: serializers.PrimaryKeyRelatedField[PlannedItem] = StrictPrimaryKeyRelatedField(
        read_only=True, allow_null=True
    )
    stopped = serializers.SerializerMethodField()
    stop = serializers.SerializerMethodField()

    class Meta:
        model = Run
        fields = [
            "run_id",
            "campaign",
            "variant",
            "kind",
            "gpus",
            "config",
            "status",
            "stopped",
            "stop",
            "observed_hours",
            "last_step",
            "created_at",
            "finished_at",
        ]
        read_only_fields = fields

    def get_stopped(self, run: Run) -> bool:
        return run.status == "stopped"

    @extend_schema_field(StopInfoSerializer(allow_null=True))
    def get_stop(self, run: Run) -> dict[str, Any] | None:
        return stop_info(run)


class LatestMetricSerializer(serializers.Serializer[Any]):
    step = StrictIntegerField()
    value = MetricValueField()


class ThroughputSerializer(StrictModelSerializer[ThroughputSample]):
    samples_per_second = FiniteFloatField(required=False, allow_null=True, min_value=0)
    tokens_per_second = FiniteFloatField(required=False, allow_null=True, min_value=0)
    gpus = StrictIntegerField(min_value=1, max_value=INT_MAX, default=1)
    measured_seconds = FiniteFloatField(required=False, allow_null=True, min_value=0)
    stopped = serializers.SerializerMethodField()
    stop = serializers.SerializerMethodField()

    class Meta:
        model = ThroughputSample
        fields = [
            "id",
            "samples_per_second",
            "tokens_per_second",
            "gpus",
            "measured_seconds",
            "created_at",
            "stopped",
            "stop",
        ]
        read_only_fields = ["id", "created_at"]

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs.get("samples_per_second") is None and attrs.get("tokens_per_second") is None:
            raise serializers.ValidationError(
                {"tokens_per_second": ["Give samples_per_second or tokens_per_second."]}
            )
        return attrs

    def get_stopped(self, sample: ThroughputSample) -> bool:
        return sample.run.status == "stopped"

    @extend_schema_field(StopInfoSerializer(allow_null=True))
    def get_stop(self, sample: ThroughputSample) -> dict[str, Any] | None:
        return stop_info(sample.run)


class CheckpointSerializer(StrictModelSerializer[Checkpoint]):
    step = StrictIntegerField(min_value=0, max_value=BIGINT_MAX)
    components = serializers.ListField(
        child=serializers.ChoiceField(choices=rules.COMPONENT_ORDER),
        help_text="What the checkpoint holds: " + ", ".join(rules.COMPONENT_ORDER) + ".",
    )
    size_bytes = StrictIntegerField(
        min_value=0, max_value=BIGINT_MAX, required=False, allow_null=True
    )
    write_seconds = FiniteFloatField(required=False, allow_null=True, min_value=0)
    restore_seconds = FiniteFloatField(required=False, allow_null=True, min_value=0)
    resume_verified = StrictBooleanField(
        default=False, help_text="Reloaded and checked in a new process."
    )
    retrieved = StrictBooleanField(
        default=False,
        help_text="Copied off the rented machine (else it ends with the lot: an alert says so).",
    )
    stopped = serializers.SerializerMethodField()
    stop = serializers.SerializerMethodField()

    class Meta:
        model = Checkpoint
        fields = [
            "id",
            "step",
            "components",
            "size_bytes",
            "write_seconds",
            "restore_seconds",
            "location",
            "resume_verified",
            "retrieved",
            "created_at",
            "stopped",
            "stop",
        ]
        read_only_fields = ["id", "created_at"]

    def validate_components(self, value: list[str]) -> list[str]:
        return [c for c in rules.COMPONENT_ORDER if c in set(value)]

    def get_stopped(self, checkpoint: Checkpoint) -> bool:
        return checkpoint.run.status == "stopped"

    @extend_schema_field(StopInfoSerializer(allow_null=True))
    def get_stop(self, checkpoint: Checkpoint) -> dict[str, Any] | None:
        return stop_info(checkpoint.run)


class LatestFiguresSerializer(serializers.Serializer[Any]):
    metrics = serializers.DictField(child=LatestMetricSerializer())
    throughput = ThroughputSerializer(allow_null=True)
    checkpoint = CheckpointSerializer(allow_null=True)
    points = StrictIntegerField()


class RunArtifactSerializer(StrictModelSerializer[RunArtifact]):
    class Meta:
        model = RunArtifact
        fields = ["path", "size_bytes", "sha256", "created_at"]
        read_only_fields = fields


class CostSoFarSerializer(serializers.Serializer[Any]):
    amount = serializers.CharField(help_text="Decimal string in the campaign's currency.")
    currency = serializers.CharField()
    basis = serializers.ChoiceField(
        choices=["lot_share", "hourly"],
        help_text="lot_share: a share of the lots the ledger holds (never a second charge); "
        "hourly: GPU-hours × the campaign's hourly rate.",
    )


class RunSegmentSerializer(StrictModelSerializer[RunSegment]):
    """An ended stretch of a resumed run, with its own hours (docs/mlflow.md)."""

    class Meta:
        model = RunSegment
        fields = ["number", "started_at", "ended_at", "status", "hours", "last_step"]
        read_only_fields = fields


class RunDetailSerializer(RunSerializer):
    latest = serializers.SerializerMethodField()
    # Files logged for the run (MLflow artifacts), with the server's own size and sha256.
    artifacts = RunArtifactSerializer(many=True, read_only=True)
    cost_so_far = serializers.SerializerMethodField()
    # What an MLflow client set: its display name, tags and dataset inputs; a resumed run's
    # earlier segments.
    tags = serializers.DictField(child=serializers.CharField(), read_only=True)
    inputs = serializers.ListField(child=serializers.DictField(), read_only=True)
    segments = RunSegmentSerializer(many=True, read_only=True)

    class Meta(RunSerializer.Meta):
        fields = [
            *RunSerializer.Meta.fields,
            "run_name",
            "tags",
            "inputs",
            "segments",
            "deleted_at",
            "latest",
            "artifacts",
            "cost_so_far",
        ]
        read_only_fields = fields

    @extend_schema_field(CostSoFarSerializer(allow_null=True))
    def get_cost_so_far(self, run: Run) -> dict[str, Any] | None:
        """Null when the campaign has neither lots nor an hourly rate (docs/domain.md §18)."""
        return accrual.cost_so_far(run)

    @extend_schema_field(LatestFiguresSerializer)
    def get_latest(self, run: Run) -> dict[str, Any]:
        """The last value of each metric (by step), the last throughput and checkpoint."""
        # From the run's metric summaries (docs/architecture.md, "Metric store"), not its points.
        latest, count = readings.latest_points(run)
        metrics: dict[str, Any] = {
            name: {"step": step, "value": json_metric_value(value)}
            for name, (step, value) in latest.items()
        }
        throughput = run.throughputs.order_by("-created_at", "-id").first()
        checkpoint = run.checkpoints.order_by("-step", "-id").first()
        return {
            "metrics": metrics,
            "throughput": ThroughputSerializer(throughput).data if throughput else None,
            "checkpoint": CheckpointSerializer(checkpoint).data if checkpoint else None,
            "points": count,
        }


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
            _scope(fields["rule"], StopRule.objects.filter(campaign_id=run.campaign_id))
        return fields


class FinishRunSerializer(serializers.Serializer[Any]):
    status = serializers.ChoiceField(choices=["completed", "failed"])
    observed_hours = HoursField(required=False, allow_null=True)


# --- Documentation of the metrics fast path ------------------------------------------------


class MetricPointDocSerializer(serializers.Serializer[Any]):
    name = IdentifierField(max_length=100)
    step = StrictIntegerField(min_value=0, max_value=BIGINT_MAX)
    value = MetricValueField(
        help_text="A number, or NaN / Infinity / -Infinity (bare JSON tokens or strings)."
    )


class MetricBatchDocSerializer(serializers.Serializer[Any]):
    points = serializers.ListField(child=MetricPointDocSerializer(), max_length=MAX_POINTS)


class RunRefusedSerializer(serializers.Serializer[Any]):
    detail = StrictCharField()
    run_id = StrictCharField()
    status = StrictCharField()
    stop = StopInfoSerializer(allow_null=True)


class MetricsAcceptedSerializer(serializers.Serializer[Any]):
    accepted = StrictIntegerField()
    stopped = StrictBooleanField()
    stop = StopInfoSerializer(allow_null=True)


class MetricNameCountSerializer(serializers.Serializer[Any]):
    name = serializers.CharField()
    count = serializers.IntegerField()


class MetricNamesSerializer(serializers.Serializer[Any]):
    """`GET /runs/{run_id}/metrics/` without `name`: what the run logged."""

    run_id = serializers.CharField()
    metrics = MetricNameCountSerializer(many=True)


class SeriesPointSerializer(serializers.Serializer[Any]):
    step = serializers.IntegerField()
    value = serializers.JSONField(help_text='A number, or "NaN", "Infinity", "-Infinity".')


class MetricSeriesSerializer(serializers.Serializer[Any]):
    """`GET /runs/{run_id}/metrics/?name=…`: the series, downsampled
    (campaigns/domain/downsampling.py)."""

    run_id = serializers.CharField()
    name = serializers.CharField()
    count = serializers.IntegerField(help_text="Points stored for this metric (all of them).")
    returned = serializers.IntegerField(help_text="Points in `points` (at most `max_points`).")
    max_points = serializers.IntegerField()
    points = SeriesPointSerializer(many=True)


class CommittedSerializer(CampaignSerializer):
    """The campaign after commit, with the frozen baseline's fingerprint."""

    baseline_digest = serializers.SerializerMethodField()

    class Meta(CampaignSerializer.Meta):
        fields = [*CampaignSerializer.Meta.fields, "baseline_digest"]

    @extend_schema_field(OpenApiTypes.STR)
    def get_baseline_digest(self, campaign: Campaign) -> str | None:
        baseline = campaign.baseline_or_none()
        return baseline.digest if baseline else None


class CommitCampaignSerializer(serializers.Serializer[Any]):
    over_team_budget = StrictBooleanField(
        required=False,
        default=False,
        help_text="Commit even though it takes the team's forecast over an allowance "
        "(docs/domain.md §22); without it such a commit answers 409 naming the figures.",
    )


def run_id_is_valid(run_id: str) -> bool:
    return re.fullmatch(RUN_ID_PATTERN, run_id) is not None


class CloseCampaignSerializer(serializers.Serializer[Any]):
    conclusion = StrictCharField(
        help_text="What the campaign concluded; a negative result is a valid conclusion."
    )
    stop_running = StrictBooleanField(
        default=False,
        help_text="Stop the runs still running, with a reason naming the close (a machine that "
        "died leaves runs that never finish). Without it, running runs refuse the close (409).",
    )


class ClosingRefusedSerializer(serializers.Serializer[Any]):
    detail = StrictCharField()
    running_runs = serializers.ListField(child=StrictCharField(), required=False)

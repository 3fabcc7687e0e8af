"""A campaign as the API writes and reads it: its corpus, team and budget; its detail with the
plan's hour figures (docs/domain.md §8.5); commit and close, their requests and answers.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from campaigns.api.fields import (
    HoursField,
    IdentifierField,
    MoneyField,
    StrictBooleanField,
    StrictCharField,
    StrictModelSerializer,
    StrictPrimaryKeyRelatedField,
)
from campaigns.domain import stop_rules
from campaigns.models import (
    Campaign,
    Team,
    team_ids_for,
)
from campaigns.models.field_lists import CAMPAIGN_TERMS
from campaigns.selectors.timeline import plan_figures_of


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
        choices=["deviation", "cut_item", "failed_check", "calibrated_hours", "planned_hours"]
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
        child=serializers.ChoiceField(choices=stop_rules.COMPONENT_ORDER), required=False
    )

    class Meta:
        model = Campaign
        fields = [
            "id",
            "team",
            "title",
            "question",
            "corpus",
            *CAMPAIGN_TERMS,
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
        return [c for c in stop_rules.COMPONENT_ORDER if c in set(value)]

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
        return plan_figures_of(campaign).as_json()


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

"""Serializers of the ledger API. Writes go through `ledger.services`; these classes only
validate shapes and render what the services return."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.urls import reverse
from rest_framework import serializers

from campaigns.api.fields import (
    HoursField,
    MoneyField,
    StrictBooleanField,
    StrictCharField,
    StrictIntegerField,
    StrictModelSerializer,
)
from campaigns.api.serializers import ObservedFigures
from campaigns.domain.observed_hours import StageObserved
from campaigns.models import Stage
from campaigns.selectors.observed_hours import reconciled
from campaigns.services.campaigns import real_user
from catalog.validators import currency_validator
from ledger import services
from ledger.models import (
    Deliverable,
    DeliverableFile,
    DeliverableKind,
    EntryKind,
    LedgerEntry,
    Report,
)


def as_drf_error(exc: DjangoValidationError) -> serializers.ValidationError:
    """The domain's field errors in DRF's shape (400 with the offending field named)."""
    if hasattr(exc, "error_dict"):
        return serializers.ValidationError(exc.message_dict)
    return serializers.ValidationError({"non_field_errors": exc.messages})


class LedgerEntrySerializer(StrictModelSerializer[LedgerEntry]):
    kind = serializers.ChoiceField(choices=EntryKind.choices, required=False)
    description = StrictCharField(max_length=300, required=False, allow_blank=True)
    amount = MoneyField(required=False)
    currency = StrictCharField(
        max_length=3, min_length=3, required=False, validators=[currency_validator]
    )
    reverses = StrictIntegerField(
        source="reverses_id", required=False, allow_null=True, min_value=1
    )
    reversed_by = serializers.SerializerMethodField()
    created_by = serializers.SerializerMethodField()

    class Meta:
        model = LedgerEntry
        fields = [
            "id",
            "kind",
            "description",
            "amount",
            "currency",
            "reverses",
            "reversed_by",
            "reservation",
            "created_by",
            "created_at",
        ]
        read_only_fields = ["id", "reversed_by", "reservation", "created_by", "created_at"]

    def get_reversed_by(self, entry: LedgerEntry) -> int | None:
        reversal = getattr(entry, "reversed_by", None)
        return reversal.pk if reversal is not None else None

    def get_created_by(self, entry: LedgerEntry) -> str | None:
        return entry.created_by.get_username() if entry.created_by else None

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs.get("reverses_id") is None:
            # A plain entry states everything; a reversal takes it from the entry it undoes.
            missing = {
                f: "This field is required."
                for f in ("kind", "description", "amount", "currency")
                if f not in attrs or attrs[f] in ("", None)
            }
            if missing:
                raise serializers.ValidationError(missing)
        return attrs

    def create(self, validated_data: dict[str, Any]) -> LedgerEntry:
        campaign, user = validated_data["campaign"], validated_data.get("user")
        try:
            if validated_data.get("reverses_id") is not None:
                return services.reverse_entry(
                    campaign=campaign,
                    entry_id=validated_data["reverses_id"],
                    description=validated_data.get("description", ""),
                    expected={
                        k: validated_data[k]
                        for k in ("kind", "amount", "currency")
                        if k in validated_data
                    },
                    acting_user=real_user(user),
                )
            return services.post_entry(
                campaign=campaign,
                kind=validated_data["kind"],
                description=validated_data["description"],
                amount=validated_data["amount"],
                currency=validated_data["currency"],
                acting_user=real_user(user),
            )
        except DjangoValidationError as exc:
            raise as_drf_error(exc) from exc


class CorpusSerializer(serializers.Serializer[Any]):
    name = StrictCharField(max_length=200)
    revision = StrictCharField(max_length=200)


class DeliverableFileSerializer(StrictModelSerializer[DeliverableFile]):
    # Blank paths, zero sizes and malformed digests are rejection reasons, not malformed
    # requests: the checks name them, and the deliverable is kept as rejected.
    path = StrictCharField(max_length=1000, allow_blank=True, trim_whitespace=False)
    # Bounded by PostgreSQL's bigint: a larger size is malformed input, not a rejection.
    size_bytes = StrictIntegerField(
        min_value=0,
        max_value=2**63 - 1,
        required=False,
        help_text="Omit (with sha256) for a file the run logged as an artifact: the server "
        "takes the size and digest it computed when the file was stored.",
    )
    sha256 = StrictCharField(
        max_length=200,
        allow_blank=True,
        required=False,
        help_text="Omit (with size_bytes) for one of the run's artifacts, named by its path.",
    )

    class Meta:
        model = DeliverableFile
        fields = ["path", "size_bytes", "sha256"]


class DeliverableSerializer(StrictModelSerializer[Deliverable]):
    kind = serializers.ChoiceField(choices=DeliverableKind.choices)
    corpus = CorpusSerializer()
    run = StrictCharField(max_length=200, required=False, allow_null=True, allow_blank=True)
    files = DeliverableFileSerializer(many=True, max_length=10_000)  # type: ignore[call-arg]
    expected_ids_ok = StrictBooleanField(required=False, allow_null=True, default=None)
    reload_verified = StrictBooleanField(required=False, allow_null=True, default=None)
    base_revision = StrictCharField(
        max_length=200, required=False, allow_blank=True, allow_null=True, default=""
    )

    class Meta:
        model = Deliverable
        fields = [
            "id",
            "kind",
            "corpus",
            "run",
            "files",
            "expected_ids_ok",
            "reload_verified",
            "base_revision",
            "accepted",
            "rejection_reasons",
            "created_at",
        ]
        read_only_fields = ["id", "accepted", "rejection_reasons", "created_at"]

    def to_representation(self, instance: Deliverable) -> dict[str, Any]:
        return {
            "id": instance.pk,
            "kind": instance.kind,
            "corpus": {"name": instance.corpus_name, "revision": instance.corpus_revision},
            "run": instance.run.run_id if instance.run else None,
            "files": DeliverableFileSerializer(instance.files.all(), many=True).data,
            "expected_ids_ok": instance.expected_ids_ok,
            "reload_verified": instance.reload_verified,
            "base_revision": instance.base_revision or None,
            "accepted": instance.accepted,
            "rejection_reasons": list(instance.rejection_reasons or []),
            "created_at": serializers.DateTimeField().to_representation(instance.created_at),
        }

    def create(self, validated_data: dict[str, Any]) -> Deliverable:
        try:
            return services.submit_deliverable(
                campaign=validated_data["campaign"],
                kind=validated_data["kind"],
                corpus_name=validated_data["corpus"]["name"],
                corpus_revision=validated_data["corpus"]["revision"],
                run_id=validated_data.get("run") or None,
                files=validated_data["files"],
                expected_ids_ok=validated_data.get("expected_ids_ok"),
                reload_verified=validated_data.get("reload_verified"),
                base_revision=validated_data.get("base_revision") or "",
                acting_user=real_user(validated_data.get("user")),
            )
        except DjangoValidationError as exc:
            raise as_drf_error(exc) from exc


class ObservedHoursSerializer(serializers.Serializer[Any]):
    observed_hours = HoursField()
    deviation_note = StrictCharField(required=False, allow_blank=True, default="")
    observed_reason = StrictCharField(
        required=False,
        allow_blank=True,
        default="",
        help_text="Why the typed hours differ from the runs' on the stage's item: required "
        "once where they differ (docs/domain.md §8.6).",
    )


class ObservedStageSerializer(ObservedFigures, StrictModelSerializer[Stage]):
    """A stage after its observed hours were recorded, with the frozen figure it is compared to."""

    # A plain string: the stage kinds' enum is documented once, by the stages endpoint.
    kind = StrictCharField(read_only=True)
    planned_hours = serializers.SerializerMethodField()
    # The stage's one observed figure, reconciled with its runs (docs/domain.md §8.6).
    observed_hours = serializers.SerializerMethodField()
    observed_source = serializers.SerializerMethodField()
    runs_observed_hours = serializers.SerializerMethodField()
    observed_reason = serializers.CharField(read_only=True)
    deviation_hours = serializers.SerializerMethodField()

    class Meta:
        model = Stage
        fields = [
            "id",
            "name",
            "kind",
            "machine",
            "resource",
            "planned_hours",
            "observed_hours",
            "observed_source",
            "runs_observed_hours",
            "observed_reason",
            "deviation_hours",
            "deviation_note",
            "observed_at",
        ]
        read_only_fields = fields

    def get_planned_hours(self, stage: Stage) -> str:
        return f"{self.context['planned_hours']:.2f}"

    def _seen(self, stage: Stage) -> StageObserved | None:
        if "_seen" not in self.context:
            self.context["_seen"] = reconciled(stage.campaign).stages.get(stage.pk)
        seen: StageObserved | None = self.context["_seen"]
        return seen

    def get_deviation_hours(self, stage: Stage) -> str | None:
        seen = self._seen(stage)
        if seen is None or seen.hours is None:
            return None
        return f"{seen.hours - self.context['planned_hours']:.2f}"


class ReportSerializer(StrictModelSerializer[Report]):
    campaign = StrictIntegerField(source="campaign_id", read_only=True)
    links = serializers.SerializerMethodField()

    class Meta:
        model = Report
        fields = [
            "id",
            "campaign",
            "status",
            "created_at",
            "started_at",
            "finished_at",
            "error",
            "links",
        ]
        read_only_fields = fields

    def get_links(self, report: Report) -> dict[str, str] | None:
        if report.status != "ready":
            return None
        request = self.context.get("request")
        links = {}
        for fmt in ("html", "markdown", "json"):
            url = reverse(f"ledger:report-{fmt}", args=[report.pk])
            links[fmt] = request.build_absolute_uri(url) if request is not None else url
        return links

    def to_representation(self, instance: Report) -> dict[str, Any]:
        data = super().to_representation(instance)
        # The renderings' links sit beside `status` once ready; `links` groups them too.
        for fmt in ("html", "markdown", "json"):
            data[fmt] = data["links"][fmt] if data["links"] else None
        return data


# --- Documentation-only shapes (the OpenAPI schema) -------------------------------------------


class LedgerSummarySerializer(serializers.Serializer[Any]):
    """GET /campaigns/{id}/ledger/summary/ (docs/api.md): money as strings with their currency."""

    currency = StrictCharField()
    rental = StrictCharField()
    included = StrictCharField()
    external = StrictCharField(help_text="Listed apart: never part of `incurred`.")
    incurred = StrictCharField(help_text="rental + included")
    accepted_deliverables = StrictIntegerField(help_text="Distinct accepted corpora.")
    cost_per_accepted = StrictCharField(allow_null=True)
    ratio = serializers.ChoiceField(choices=["defined", "undefined"])
    undefined_reason = StrictCharField(allow_null=True)
    rejection_reasons = serializers.ListField(child=StrictCharField())
    conclusion = StrictCharField(allow_null=True)


class ReportStartedSerializer(serializers.Serializer[Any]):
    id = StrictIntegerField()
    status = StrictCharField()
    url = serializers.URLField()


class DetailSerializer(serializers.Serializer[Any]):
    detail = StrictCharField()

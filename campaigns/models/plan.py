"""The plan of a campaign: items, stop rules, decision points, stages, lots and the amendments
made after commit (each with its reason)."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from campaigns.domain import observed_hours
from campaigns.domain import stop_rules as rules
from catalog.validators import no_bidi_controls

from .campaign import Campaign
from .choices import (
    CampaignStatus,
    Comparator,
    ItemRole,
    ItemStatus,
    Outcome,
    StageKind,
    StopRuleKind,
    Tier,
)
from .columns import HOURS
from .errors import PlanFrozen

# The work of an item, which the forecast turns into hours (docs/domain.md §10): fields, not
# config keys, so they are named, documented and validated (migrated from the config keys).
WORK_FIELDS = (
    "tokens",
    "samples",
    "tokens_per_sample",
    "epochs",
    "assumed_tokens_per_second",
    "assumed_samples_per_second",
    "gpus",
)


AMENDABLE_ITEM_FIELDS = (
    "name",
    "tier",
    "config",
    "planned_hours",
    "prep_hours",
    "rationale",
    *WORK_FIELDS,
    "estimate_spec",
)


class PlannedItem(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="items")
    name = models.CharField(max_length=120, validators=[no_bidi_controls])
    role = models.CharField(max_length=20, choices=ItemRole.choices, default=ItemRole.VARIANT)
    tier = models.CharField(max_length=20, choices=Tier.choices, default=Tier.MANDATORY)
    config = models.JSONField(default=dict, blank=True)
    planned_hours = models.DecimalField(**HOURS, default=Decimal("0"))  # type: ignore[arg-type]
    prep_hours = models.DecimalField(**HOURS, default=Decimal("0"))  # type: ignore[arg-type]
    rationale = models.TextField(blank=True, help_text="Which result would change the choice?")
    gpu = models.CharField(max_length=40, blank=True, help_text="GPU model it needs, if any.")
    status = models.CharField(max_length=10, choices=ItemStatus.choices, default=ItemStatus.PLANNED)
    tokens = models.PositiveBigIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="Training tokens per epoch (the work, with epochs); or give samples.",
    )
    samples = models.PositiveBigIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="Training samples per epoch, when the work is counted in samples.",
    )
    tokens_per_sample = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="Tokens in one sample: turns samples into tokens for a tokens/s pilot.",
    )
    epochs = models.FloatField(
        null=True,
        blank=True,
        validators=[MinValueValidator(0.001), MaxValueValidator(1_000_000)],
        help_text="Passes over the data (default 1).",
    )
    assumed_tokens_per_second = models.FloatField(
        null=True,
        blank=True,
        validators=[MinValueValidator(0.001), MaxValueValidator(1e12)],
        help_text="Throughput the planned hours assume, on this item's GPUs, until a pilot "
        "measures it.",
    )
    assumed_samples_per_second = models.FloatField(
        null=True,
        blank=True,
        validators=[MinValueValidator(0.001), MaxValueValidator(1e12)],
        help_text="As above, in samples per second.",
    )
    gpus = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1), MaxValueValidator(100_000)],
        help_text="GPUs the item trains on (default: as many as its pilot).",
    )
    # The preview's model / training / hardware objects (docs/domain.md §24.9), validated by the
    # estimates API's preview serializers: the forecast and the hardware options read it.
    estimate_spec = models.JSONField(
        null=True,
        blank=True,
        help_text="The estimate's model, training and hardware, as POST /estimates/preview/ "
        "takes them (e.g. a LoRA fine-tune).",
    )
    # Where the planned hours came from when a clone multiplied them by a lesson of the
    # predecessor (docs/domain.md §21): the forecast then applies no calibration on top.
    calibrated_from = models.JSONField(
        null=True,
        blank=True,
        help_text="Set by the clone: the ratio its planned hours carry, its source and spread.",
    )

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "name"], name="item_name_unique"),
            models.CheckConstraint(
                condition=models.Q(tier__in=Tier.values), name="item_tier_valid"
            ),
            models.CheckConstraint(
                condition=models.Q(role__in=ItemRole.values), name="item_role_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.tier})"

    def as_plan(self) -> dict[str, Any]:
        return {
            "id": self.pk,
            "name": self.name,
            "role": self.role,
            "tier": self.tier,
            "config": self.config,
            "planned_hours": str(self.planned_hours),
            "prep_hours": str(self.prep_hours),
            "rationale": self.rationale,
            "status": self.status,
        }

    def save(self, *args: Any, **kwargs: Any) -> None:
        amending = getattr(self, "_amendment", False)
        if self.pk is None and not self.campaign.is_draft and not amending:
            # A new item after commit is an amendment too; it is allowed through amend().
            raise PlanFrozen("items added after commit must go through an amendment")
        if self.pk is not None and not self.campaign.is_draft and not amending:
            stored = PlannedItem.objects.get(pk=self.pk)
            changed = [f for f in AMENDABLE_ITEM_FIELDS if getattr(stored, f) != getattr(self, f)]
            if changed:
                raise PlanFrozen(
                    f"changes to {', '.join(changed)} after commit need an amendment reason"
                )
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> Any:
        if not self.campaign.is_draft:
            raise PlanFrozen("a committed item is never deleted: cut it with a decision instead")
        return super().delete(*args, **kwargs)


class StopRule(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="stop_rules")
    kind = models.CharField(max_length=20, choices=StopRuleKind.choices)
    metric = models.CharField(max_length=100, blank=True)
    comparator = models.CharField(max_length=2, choices=Comparator.choices, blank=True)
    threshold = models.FloatField(null=True, blank=True)
    description = models.TextField(blank=True)
    # The rule's grace (docs/domain.md §4.6): how long the loop may go on after the rule fired,
    # to reach and save a checkpoint. Part of the rule, so frozen at commit with it.
    grace_steps = models.PositiveIntegerField(
        default=0,
        validators=[MaxValueValidator(rules.MAX_GRACE_STEPS)],
        help_text="Optimizer steps the loop may go on after the firing step (0: none).",
    )
    grace_minutes = models.PositiveIntegerField(
        default=0,
        validators=[MaxValueValidator(rules.MAX_GRACE_MINUTES)],
        help_text="Wall minutes the loop may go on after the stop (0: none).",
    )
    # An idle-GPU rule (docs/domain.md §4.1): the minutes utilisation stays under `threshold`
    # (percent) before the rule fires.
    for_minutes = models.PositiveIntegerField(
        default=0,
        validators=[MaxValueValidator(rules.MAX_GRACE_MINUTES)],
        help_text="Idle GPU: minutes under the threshold before it fires (0 for other kinds).",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    @property
    def grace(self) -> rules.Grace:
        return rules.Grace(steps=self.grace_steps, minutes=self.grace_minutes)

    def __str__(self) -> str:
        if self.kind == StopRuleKind.METRIC_THRESHOLD:
            comparator = self.get_comparator_display()
            return f"#{self.pk} stop when {self.metric} {comparator} {self.threshold}"
        if self.kind == StopRuleKind.IDLE_GPU:
            return f"#{self.pk} stop when GPUs < {self.threshold:g}% for {self.for_minutes} min"
        return f"#{self.pk} {self.get_kind_display()}"

    def clean(self) -> None:
        """Each kind's own fields, checked by its entry in _RULE_CHECKS (one kind, one check)."""
        check = _RULE_CHECKS.get(self.kind)
        errors = check(self) if check is not None else {}
        if errors:
            raise ValidationError(errors)

    def _refuse_if_frozen(self) -> None:
        campaign_status = Campaign.objects.filter(pk=self.campaign_id).values_list(
            "status", flat=True
        )
        if campaign_status and campaign_status[0] != CampaignStatus.DRAFT:
            raise PlanFrozen("stop rules are immutable once the plan is committed")

    def save(self, *args: Any, **kwargs: Any) -> None:
        self._refuse_if_frozen()
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> Any:
        self._refuse_if_frozen()
        return super().delete(*args, **kwargs)

    def as_plan(self) -> dict[str, Any]:
        return {
            "id": self.pk,
            "kind": self.kind,
            "metric": self.metric,
            "comparator": self.comparator,
            "threshold": self.threshold,
            "description": self.description,
            "grace_steps": self.grace_steps,
            "grace_minutes": self.grace_minutes,
            "for_minutes": self.for_minutes,
        }


def _threshold_rule_errors(rule: StopRule) -> dict[str, str]:
    # Every missing field at once: the form shows them together.
    errors = {}
    if not rule.metric.strip():
        errors["metric"] = "a threshold rule names its metric"
    if not rule.comparator:
        errors["comparator"] = "a threshold rule needs a comparator (lt, le, gt, ge)"
    if rule.threshold is None:
        errors["threshold"] = "a threshold rule needs a threshold"
    return errors


def _idle_rule_errors(rule: StopRule) -> dict[str, str]:
    if rule.threshold is None or not 0 < rule.threshold <= 100:
        return {
            "threshold": "an idle-GPU rule's threshold is a utilisation "
            "percentage above 0 and at most 100"
        }
    if not rule.for_minutes:
        return {"for_minutes": "an idle-GPU rule says for how many minutes"}
    return {}


def _custom_rule_errors(rule: StopRule) -> dict[str, str]:
    if not (rule.description or "").strip():
        return {"description": "a custom rule is written out in words"}
    return {}


def _budget_rule_errors(rule: StopRule) -> dict[str, str]:
    # A budget rule's threshold is a fraction of the budget (docs/domain.md §18): 0.8 stops
    # at 80% spent. No threshold at all is the whole budget.
    if rule.threshold is not None and not 0 < rule.threshold <= 10:
        return {
            "threshold": "a budget rule's threshold is a fraction of the budget, "
            "above 0 and at most 10 (1.0 = the whole budget)"
        }
    return {}


_RULE_CHECKS: dict[str, Callable[[StopRule], dict[str, str]]] = {
    StopRuleKind.METRIC_THRESHOLD: _threshold_rule_errors,
    StopRuleKind.IDLE_GPU: _idle_rule_errors,
    StopRuleKind.CUSTOM: _custom_rule_errors,
    StopRuleKind.BUDGET_OVERRUN: _budget_rule_errors,
}


class DecisionPoint(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="decisions")
    label = models.CharField(max_length=120, default="after the pilot")
    outcome = models.CharField(max_length=10, choices=Outcome.choices, default=Outcome.PENDING)
    rationale = models.TextField(blank=True)
    cut_variants = models.ManyToManyField(PlannedItem, blank=True, related_name="cut_by")
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"Decision {self.label}: {self.outcome}"


class Stage(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="stages")
    name = models.CharField(max_length=120, validators=[no_bidi_controls])
    kind = models.CharField(max_length=20, choices=StageKind.choices)
    machine = models.BooleanField(default=True, help_text="Occupies a GPU (else human time).")
    resource = models.CharField(
        max_length=60, blank=True, help_text="Which GPU or lot it occupies, e.g. 'rtx4090-a'."
    )
    variant = models.ForeignKey(
        PlannedItem, null=True, blank=True, on_delete=models.SET_NULL, related_name="stages"
    )
    planned_hours = models.DecimalField(**HOURS, default=Decimal("0"))  # type: ignore[arg-type]
    depends_on = models.ManyToManyField("self", symmetrical=False, blank=True, related_name="+")
    observed_hours = models.DecimalField(**HOURS, null=True, blank=True)  # type: ignore[arg-type]
    deviation_note = models.TextField(blank=True)
    # Why the typed observed hours differ from the runs' (docs/domain.md §8.6): asked once.
    observed_reason = models.TextField(blank=True)
    observed_at = models.DateTimeField(null=True, blank=True)
    # As the item's: the predecessor's lesson the clone multiplied the planned hours by (§21).
    calibrated_from = models.JSONField(
        null=True,
        blank=True,
        help_text="Set by the clone: the ratio its planned hours carry, its source and spread.",
    )

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.planned_hours} h)"

    def clean(self) -> None:
        if self.machine and not self.resource:
            raise ValidationError({"resource": "a machine stage names the GPU or lot it occupies"})
        if self.kind == StageKind.HUMAN_PREP and self.machine:
            raise ValidationError({"machine": "human preparation does not occupy a GPU"})
        if self.kind == StageKind.ANALYSIS and self.machine:
            raise ValidationError({"machine": "analysis is human time: it does not occupy a GPU"})

    def as_plan(self) -> dict[str, Any]:
        return {
            "id": self.pk,
            "name": self.name,
            "kind": self.kind,
            "machine": self.machine,
            "resource": self.resource,
            "variant": self.variant_id,
            "planned_hours": str(self.planned_hours),
            "depends_on": sorted(s.pk for s in self.depends_on.all()),
        }

    def needs_deviation_note(self, observed: Decimal) -> bool:
        """More than 10% away from the plan needs an explanation (the rule:
        campaigns/domain/observed_hours.py)."""
        return observed_hours.needs_deviation_note(Decimal(self.planned_hours), observed)


class LotReservation(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="lots")
    plan = models.ForeignKey("catalog.RentalPlan", on_delete=models.PROTECT, related_name="+")
    quantity = models.PositiveIntegerField(default=1, validators=[MinValueValidator(1)])
    start = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.quantity} × {self.plan}"

    @property
    def total_price(self) -> Decimal:
        # A lot is priced per lot: its GPU count never multiplies the price again.
        return self.plan.price * self.quantity

    def as_plan(self) -> dict[str, Any]:
        return {
            "plan": str(self.plan),
            "quantity": self.quantity,
            "price": str(self.plan.price),
            "currency": self.plan.currency,
            "total": str(self.total_price),
            "start": self.start.isoformat() if self.start else None,
        }


class Amendment(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="amendments")
    item = models.ForeignKey(
        PlannedItem, null=True, blank=True, on_delete=models.SET_NULL, related_name="amendments"
    )
    changes = models.JSONField()
    reason = models.TextField()
    made_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    made_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["made_at", "id"]

    def __str__(self) -> str:
        return f"Amendment to {self.item}: {self.reason[:40]}"

"""The campaign (one decision bought with a window, a budget and a plan) and its frozen plan
baseline, written once at commit and never rewritten."""

from __future__ import annotations

import hashlib
from decimal import Decimal
from typing import Any

import pgtrigger
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models

from catalog.validators import currency_validator, no_bidi_controls

from .choices import CampaignStatus, ItemStatus, Tier
from .columns import HOURS, MONEY
from .errors import CampaignClosed, PlanFrozen
from .teams import Team, team_ids_for


def default_required_components() -> list[str]:
    return ["model", "optimizer", "progress"]


class CampaignQuerySet(models.QuerySet["Campaign"]):
    def for_user(self, user: Any, *, write: bool = False) -> CampaignQuerySet:
        if getattr(user, "is_superuser", False):
            return self
        return self.filter(team_id__in=team_ids_for(user, write=write))


class Campaign(models.Model):
    team = models.ForeignKey(Team, on_delete=models.PROTECT, related_name="campaigns")
    title = models.CharField(max_length=200, validators=[no_bidi_controls])
    question = models.TextField(
        help_text="The decision this campaign buys, e.g. 'does variant A or B beat the baseline "
        "on corpus X by at least T?'"
    )
    corpus_name = models.CharField(max_length=200)
    corpus_revision = models.CharField(
        max_length=200, help_text="Exact revision or hash of the fixed corpus."
    )
    expected_deliverables = models.TextField(
        blank=True, help_text="What closes the campaign: predictions, error analysis, artifact…"
    )
    decision_threshold = models.CharField(
        max_length=200, blank=True, help_text="e.g. '+1.0 F1 over the baseline'."
    )
    window_hours = models.DecimalField(**HOURS, default=Decimal("72"))  # type: ignore[arg-type]
    budget = models.DecimalField(**MONEY, null=True, blank=True, validators=[MinValueValidator(0)])  # type: ignore[arg-type]
    currency = models.CharField(max_length=3, default="USD", validators=[currency_validator])
    # Paying by the hour instead of (or beyond) reserved lots: a run costs its GPU-hours × this
    # rate and posts it to the ledger when it finishes (docs/domain.md §18).
    hourly_rate_per_gpu = models.DecimalField(
        max_digits=14,
        decimal_places=2,
        null=True,
        blank=True,
        validators=[MinValueValidator(0)],
        help_text="Price of one GPU-hour, in the campaign's currency, when not renting lots.",
    )
    status = models.CharField(
        max_length=10, choices=CampaignStatus.choices, default=CampaignStatus.DRAFT
    )
    conclusion = models.TextField(
        blank=True, help_text="The answer reached (a negative result is a valid answer)."
    )
    # What the predecessor left open (deviation notes, cut items, failed checks) when this
    # campaign was planned from it: the plan starts from them (docs/domain.md §21).
    inherited_uncertainties = models.JSONField(default=list, blank=True)
    planned_from = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="successors"
    )
    required_checkpoint_components = models.JSONField(
        default=default_required_components,
        blank=True,
        help_text="What a checkpoint must hold to count as a usable resume.",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    committed_at = models.DateTimeField(null=True, blank=True)
    committed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    closed_at = models.DateTimeField(null=True, blank=True)
    closed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    objects = CampaignQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]

    def clean(self) -> None:
        # The window is the time the runs have (docs/domain.md §2): a plan needs some, and every
        # figure that divides by it (lot selection, "% of the window") needs it positive.
        if self.window_hours is not None and Decimal(self.window_hours) <= 0:
            raise ValidationError(
                {"window_hours": "the window is the time the runs have: more than 0 h"}
            )

    def __str__(self) -> str:
        return self.title

    @property
    def is_draft(self) -> bool:
        return self.status == CampaignStatus.DRAFT

    @property
    def is_closed(self) -> bool:
        return self.status == CampaignStatus.CLOSED

    def refuse_if_closed(self) -> None:
        if self.status == CampaignStatus.CLOSED:
            raise CampaignClosed(
                f"the campaign is closed ({self.closed_at:%Y-%m-%d %H:%M} UTC): it takes no run "
                "data, decisions, observed hours or deliverables; ledger entries are still taken"
                if self.closed_at
                else "the campaign is closed: it takes no run data, decisions, observed hours "
                "or deliverables; ledger entries are still taken"
            )

    def commit_problems(self) -> list[str]:
        problems = []
        if not self.items.filter(tier=Tier.MANDATORY).exclude(status=ItemStatus.CUT).exists():
            problems.append("the plan needs at least one mandatory item")
        if not self.stop_rules.exists():
            problems.append("the plan needs at least one stop rule, written before the runs")
        # Commit posts the lots to the ledger, which never sums two currencies.
        for lot in self.lots.exclude(plan__currency=self.currency).select_related("plan"):
            problems.append(
                f"the lot {lot.plan.provider} {lot.plan.name} is priced in "
                f"{lot.plan.currency}, the campaign in {self.currency}"
            )
        return problems

    def snapshot(self) -> dict[str, Any]:
        """The plan as it stands, in plain JSON: what the baseline freezes."""
        items = list(self.items.order_by("id"))
        stages = list(self.stages.order_by("id").prefetch_related("depends_on"))
        return {
            "title": self.title,
            "question": self.question,
            "corpus": {"name": self.corpus_name, "revision": self.corpus_revision},
            "decision_threshold": self.decision_threshold,
            "window_hours": str(self.window_hours),
            "budget": None if self.budget is None else str(self.budget),
            "currency": self.currency,
            "hourly_rate_per_gpu": (
                None if self.hourly_rate_per_gpu is None else str(self.hourly_rate_per_gpu)
            ),
            "items": [item.as_plan() for item in items],
            "stop_rules": [rule.as_plan() for rule in self.stop_rules.order_by("id")],
            "stages": [stage.as_plan() for stage in stages],
            "lots": [lot.as_plan() for lot in self.lots.select_related("plan").order_by("id")],
            "reserved_machine_hours": str(self.reserved_machine_hours()),
        }

    def reserved_machine_hours(self) -> Decimal:
        """Machine-occupied hours of the planned stages (or of the items, without stages)."""
        stage_hours = self.stages.filter(machine=True).aggregate(h=models.Sum("planned_hours"))["h"]
        if stage_hours is not None:
            return Decimal(stage_hours)
        item_hours = self.items.exclude(status=ItemStatus.CUT).aggregate(
            h=models.Sum("planned_hours")
        )["h"]
        return Decimal(item_hours or 0)

    def baseline_or_none(self) -> PlanBaseline | None:
        return PlanBaseline.objects.filter(campaign=self).first()


class PlanBaseline(models.Model):
    campaign = models.OneToOneField(Campaign, on_delete=models.PROTECT, related_name="baseline")
    snapshot = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        triggers = [
            pgtrigger.Protect(
                name="baseline_never_rewritten", operation=pgtrigger.Update | pgtrigger.Delete
            )
        ]

    def __str__(self) -> str:
        return f"Baseline of {self.campaign} at {self.created_at:%Y-%m-%d %H:%M}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None:
            raise PlanFrozen("a committed plan baseline is never rewritten")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> Any:
        raise PlanFrozen("a committed plan baseline is never deleted")

    @property
    def digest(self) -> str:
        import json

        return hashlib.sha256(json.dumps(self.snapshot, sort_keys=True).encode()).hexdigest()

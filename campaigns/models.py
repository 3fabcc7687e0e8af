"""Campaign planning: teams, campaigns, planned items, stop rules, decisions, stages, lots,
the frozen plan baseline and its amendments, and the runs logged against a campaign.

A campaign buys one decision. It is planned while `draft`; `commit()` freezes a baseline
snapshot that is never rewritten, after which stop rules are immutable and item changes are
recorded as amendments with a reason.
"""

from __future__ import annotations

import hashlib
import secrets
from decimal import Decimal
from typing import Any

import pgtrigger
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils import timezone

from catalog.validators import currency_validator

HOURS = {"max_digits": 9, "decimal_places": 2, "validators": [MinValueValidator(Decimal("0"))]}
MONEY = {"max_digits": 14, "decimal_places": 2}


class PlanFrozen(Exception):
    """A change that the committed plan forbids (stop rules, baseline, committed state)."""


class CampaignClosed(Exception):
    """The campaign is closed: it takes no run data, decisions, observed hours or deliverables."""


class RunsStillRunning(Exception):
    """Close was refused: these runs are still running (409, naming them)."""

    def __init__(self, run_ids: list[str]) -> None:
        super().__init__(
            f"runs still running: {', '.join(run_ids)}; finish or stop them, or close with "
            "stop_running to stop them"
        )
        self.run_ids = run_ids


class CommitRefused(Exception):
    """Commit was refused; `problems` says which requirement is missing."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


class CommitOverTeamBudget(Exception):
    """Commit was refused by a receiver of `plan_commit_requested`: it would take the team's
    forecast over an allowance (docs/domain.md §22). `problems` names the figures in words,
    `periods` the figures themselves; committing with the acknowledgement goes through."""

    def __init__(self, problems: list[str], periods: list[dict[str, Any]]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems
        self.periods = periods


# --- Teams -------------------------------------------------------------------------------


class Team(models.Model):
    name = models.CharField(max_length=100, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # Alerts are also POSTed here, signed with the secret (docs/domain.md §19); owners set both.
    webhook_url = models.URLField(
        max_length=500, blank=True, help_text="Alerts are POSTed here as JSON, if set."
    )
    webhook_secret = models.CharField(
        max_length=200,
        blank=True,
        help_text="Signs each alert: X-Desk-Signature: sha256=<hex HMAC-SHA256 of the body>.",
    )
    members: models.ManyToManyField[Any, Any] = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="Membership", related_name="teams"
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Role(models.TextChoices):
    VIEWER = "viewer", "Viewer"
    PLANNER = "planner", "Planner"
    OWNER = "owner", "Owner"


WRITER_ROLES = frozenset({Role.PLANNER, Role.OWNER})


class MembershipQuerySet(models.QuerySet["Membership"]):
    """Every role check of the project goes through here: the admin, the API and the services
    ask the same question the same way."""

    def writers(self) -> MembershipQuerySet:
        return self.filter(role__in=[Role.PLANNER, Role.OWNER])

    def of(self, user: Any) -> MembershipQuerySet:
        """`user`'s memberships; none for an anonymous caller or an ingest key (no user row)."""
        if not getattr(user, "is_authenticated", False) or getattr(user, "pk", None) is None:
            return self.none()
        return self.filter(user_id=user.pk)

    def team_ids(self, user: Any, *, write: bool = False) -> list[int]:
        """Ids of the teams whose objects `user` may read (or, with write, change)."""
        memberships = self.of(user)
        if write:
            memberships = memberships.writers()
        return list(memberships.values_list("team_id", flat=True))

    def has_role(self, user: Any, team_id: int | None, roles: set[str] | frozenset[str]) -> bool:
        if getattr(user, "is_superuser", False):
            return True
        if team_id is None:
            return False
        return self.of(user).filter(team_id=team_id, role__in=roles).exists()

    def can_write(self, user: Any, team_id: int | None) -> bool:
        return self.has_role(user, team_id, WRITER_ROLES)


class Membership(models.Model):
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.PLANNER)

    objects = MembershipQuerySet.as_manager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["team", "user"], name="one_role_per_team")]

    def __str__(self) -> str:
        return f"{self.user} in {self.team} ({self.role})"


def team_ids_for(user: Any, *, write: bool = False) -> list[int]:
    """Ids of the teams whose objects `user` may read (or, with write, change)."""
    return Membership.objects.team_ids(user, write=write)


# --- Campaigns ---------------------------------------------------------------------------


class CampaignStatus(models.TextChoices):
    DRAFT = "draft", "Draft"
    COMMITTED = "committed", "Committed"
    RUNNING = "running", "Running"
    CLOSED = "closed", "Closed"


def default_required_components() -> list[str]:
    return ["model", "optimizer", "progress"]


class CampaignQuerySet(models.QuerySet["Campaign"]):
    def for_user(self, user: Any, *, write: bool = False) -> CampaignQuerySet:
        if getattr(user, "is_superuser", False):
            return self
        return self.filter(team_id__in=team_ids_for(user, write=write))


class Campaign(models.Model):
    team = models.ForeignKey(Team, on_delete=models.PROTECT, related_name="campaigns")
    title = models.CharField(max_length=200)
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


# --- Planned items -----------------------------------------------------------------------


class ItemRole(models.TextChoices):
    BASELINE = "baseline", "Baseline"
    VARIANT = "variant", "Variant"
    DATA_CHECK = "data_check", "Data check"
    RESUME_CHECK = "resume_check", "Resume check"
    OTHER = "other", "Other"


class Tier(models.TextChoices):
    MANDATORY = "mandatory", "Mandatory"
    USEFUL = "useful", "Useful"
    EXPLORATORY = "exploratory", "Exploratory"


class ItemStatus(models.TextChoices):
    PLANNED = "planned", "Planned"
    DONE = "done", "Done"
    CUT = "cut", "Cut"
    STOPPED = "stopped", "Stopped"


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
    name = models.CharField(max_length=120)
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


# --- Stop rules --------------------------------------------------------------------------


class StopRuleKind(models.TextChoices):
    NON_FINITE_LOSS = "non_finite_loss", "Non-finite loss (NaN/±Inf)"
    METRIC_THRESHOLD = "metric_threshold", "Metric beyond a threshold"
    INPUT_TRUNCATED = "input_truncated", "Essential input truncated"
    NO_USABLE_RESUME = "no_usable_resume", "No usable resume"
    BUDGET_OVERRUN = "budget_overrun", "Budget or time overrun"
    CUSTOM = "custom", "Custom (free text)"


class Comparator(models.TextChoices):
    LT = "lt", "<"
    LE = "le", "≤"
    GT = "gt", ">"
    GE = "ge", "≥"


class StopRule(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="stop_rules")
    kind = models.CharField(max_length=20, choices=StopRuleKind.choices)
    metric = models.CharField(max_length=100, blank=True)
    comparator = models.CharField(max_length=2, choices=Comparator.choices, blank=True)
    threshold = models.FloatField(null=True, blank=True)
    description = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        if self.kind == StopRuleKind.METRIC_THRESHOLD:
            comparator = self.get_comparator_display()
            return f"#{self.pk} stop when {self.metric} {comparator} {self.threshold}"
        return f"#{self.pk} {self.get_kind_display()}"

    def clean(self) -> None:
        if self.kind == StopRuleKind.METRIC_THRESHOLD:
            errors = {}
            if not self.metric.strip():
                errors["metric"] = "a threshold rule names its metric"
            if not self.comparator:
                errors["comparator"] = "a threshold rule needs a comparator (lt, le, gt, ge)"
            if self.threshold is None:
                errors["threshold"] = "a threshold rule needs a threshold"
            if errors:
                raise ValidationError(errors)
        if self.kind == StopRuleKind.CUSTOM and not (self.description or "").strip():
            raise ValidationError({"description": "a custom rule is written out in words"})
        # A budget rule's threshold is a fraction of the budget (docs/domain.md §18): 0.8 stops
        # at 80% spent.
        budget_rule = self.kind == StopRuleKind.BUDGET_OVERRUN and self.threshold is not None
        if budget_rule and not 0 < self.threshold <= 10:  # type: ignore[operator]
            raise ValidationError(
                {
                    "threshold": "a budget rule's threshold is a fraction of the budget, "
                    "above 0 and at most 10 (1.0 = the whole budget)"
                }
            )

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
        }


# --- Decisions ---------------------------------------------------------------------------


class Outcome(models.TextChoices):
    PENDING = "pending", "Pending (planned decision point)"
    CONTINUE = "continue", "Continue"
    CUT = "cut", "Cut optional variants"
    REVISE = "revise", "Revise the question"


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


# --- Calendar stages and lots ------------------------------------------------------------


class StageKind(models.TextChoices):
    SETUP = "setup", "Setup / installation"
    LOADING = "loading", "Data loading"
    PILOT = "pilot", "Pilot"
    TRAINING = "training", "Training"
    VALIDATION = "validation", "Validation"
    LONG_INPUTS = "long_inputs", "Long inputs"
    INFERENCE = "inference", "Inference / predictions"
    OUTPUTS = "outputs", "Writing outputs"
    CHECKPOINT_IO = "checkpoint_io", "Checkpoint write/transfer/restore"
    RETRIEVAL = "retrieval", "Retrieval of results"
    HUMAN_PREP = "human_prep", "Human preparation"
    ANALYSIS = "analysis", "Human analysis of the results"


class Stage(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="stages")
    name = models.CharField(max_length=120)
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
    observed_at = models.DateTimeField(null=True, blank=True)

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
        """More than 10% away from the plan needs an explanation."""
        planned = Decimal(self.planned_hours)
        if planned == 0:
            return observed != 0
        return abs(observed - planned) > planned * Decimal("0.10")


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


# --- The frozen baseline and its amendments -----------------------------------------------


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


# --- Ingest keys ---------------------------------------------------------------------------


class RunKind(models.TextChoices):
    PILOT = "pilot", "Pilot"
    FULL = "full", "Full"
    INFERENCE = "inference", "Inference"


class IngestKey(models.Model):
    """A campaign-scoped key for training loops: it may only append run data to its campaign.

    Only a SHA-256 digest is stored; the key itself is shown once, when created.
    """

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="ingest_keys")
    name = models.CharField(max_length=100, default="training loop")
    # A key bound to an item (and a run kind) lets an MLflow loop open runs without naming the
    # item itself: see docs/mlflow.md.
    item = models.ForeignKey(
        PlannedItem, null=True, blank=True, on_delete=models.SET_NULL, related_name="ingest_keys"
    )
    kind = models.CharField(max_length=10, choices=RunKind.choices, blank=True, default="")
    prefix = models.CharField(max_length=12, editable=False)
    digest = models.CharField(max_length=64, unique=True, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.name})"

    @staticmethod
    def hash(raw: str) -> str:
        return hashlib.sha256(raw.encode()).hexdigest()

    @classmethod
    def issue(
        cls,
        campaign: Campaign,
        *,
        name: str = "training loop",
        user: Any = None,
        item: PlannedItem | None = None,
        kind: str = "",
    ) -> tuple[IngestKey, str]:
        raw = "cdk_" + secrets.token_urlsafe(32)
        key = cls.objects.create(
            campaign=campaign,
            name=name,
            prefix=raw[:12],
            digest=cls.hash(raw),
            created_by=user,
            item=item,
            kind=kind,
        )
        return key, raw

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    def revoke(self) -> None:
        if self.revoked_at is None:
            self.revoked_at = timezone.now()
            self.save(update_fields=["revoked_at"])


# --- Runs ----------------------------------------------------------------------------------


class RunStatus(models.TextChoices):
    RUNNING = "running", "Running"
    STOPPED = "stopped", "Stopped by a rule"
    COMPLETED = "completed", "Completed"
    FAILED = "failed", "Failed"


class Run(models.Model):
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="+")
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="runs")
    run_id = models.CharField(max_length=200)
    variant = models.ForeignKey(
        PlannedItem, null=True, blank=True, on_delete=models.PROTECT, related_name="runs"
    )
    kind = models.CharField(max_length=10, choices=RunKind.choices, default=RunKind.FULL)
    # GPUs the run occupies: its GPU-hours (hence its cost) are its hours × this.
    gpus = models.PositiveIntegerField(default=1, validators=[MinValueValidator(1)])
    config = models.JSONField(default=dict, blank=True)
    config_digest = models.CharField(max_length=64)
    status = models.CharField(max_length=10, choices=RunStatus.choices, default=RunStatus.RUNNING)
    stop_rule = models.ForeignKey(
        StopRule, null=True, blank=True, on_delete=models.PROTECT, related_name="stopped_runs"
    )
    stop_reason = models.TextField(blank=True)
    stop_step = models.BigIntegerField(null=True, blank=True)
    stopped_at = models.DateTimeField(null=True, blank=True)
    observed_hours = models.DecimalField(**HOURS, null=True, blank=True)  # type: ignore[arg-type]
    last_step = models.BigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Free-form labels (MLflow's run tags, `mlflow.*` system tags included): kept, not
    # interpreted.
    tags = models.JSONField(default=dict, blank=True)
    # MLflow's run name: display text, any characters, renamable; `run_id` stays the
    # identifier (docs/mlflow.md).
    run_name = models.CharField(max_length=500, blank=True, default="")
    # Dataset inputs as MLflow logs them: [{"dataset": {name, digest, source_type, source,
    # schema, profile}, "tags": [{key, value}]}], one per (name, digest).
    inputs = models.JSONField(default=list, blank=True)
    # MLflow's soft delete (runs/delete, runs/restore): hidden from search, kept with its data.
    deleted_at = models.DateTimeField(null=True, blank=True)
    # Resumed runs (docs/domain.md §4): the current segment started here (None: at
    # created_at), and the hours of the earlier segments (RunSegment) add up to prior_hours.
    segment_started_at = models.DateTimeField(null=True, blank=True)
    prior_hours = models.DecimalField(**HOURS, default=Decimal("0"))  # type: ignore[arg-type]

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["team", "run_id"], name="run_id_unique_in_team")
        ]

    def __str__(self) -> str:
        return self.run_id

    @staticmethod
    def digest_config(config: Any) -> str:
        import json

        return hashlib.sha256(
            json.dumps(config, sort_keys=True, separators=(",", ":")).encode()
        ).hexdigest()


class RunSegment(models.Model):
    """An ended stretch of a resumed run: a run that failed (not completed, not stopped by a
    rule) can be set running again; each stretch keeps its own hours, so its cost counts
    once (docs/domain.md §4)."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="segments")
    number = models.PositiveIntegerField()
    started_at = models.DateTimeField()
    ended_at = models.DateTimeField()
    status = models.CharField(max_length=10, choices=RunStatus.choices)
    hours = models.DecimalField(**HOURS)  # type: ignore[arg-type]
    last_step = models.BigIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["run", "number"]
        constraints = [
            models.UniqueConstraint(fields=["run", "number"], name="run_segment_number_unique")
        ]

    def __str__(self) -> str:
        return f"segment {self.number} of {self.run_id}: {self.hours} h"


class MetricPoint(models.Model):
    # No index of its own: the (run, name, step) index leads with it.
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="metrics", db_index=False)
    # MLflow allows 250 characters (docs/mlflow.md); /api/v1/ keeps its own 100.
    name = models.CharField(max_length=250)
    step = models.BigIntegerField()
    # PostgreSQL's double precision keeps NaN and ±Inf; SQLite turns NaN into NULL, so the
    # token is also kept as text when the value is not finite.
    value = models.FloatField(null=True)
    non_finite = models.CharField(max_length=9, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    # What the client said: MLflow's millisecond timestamp (None when not sent) and the logged
    # model the point describes (MLflow 3's model_id, "" for none).
    timestamp_ms = models.BigIntegerField(null=True, blank=True)
    model_id = models.CharField(max_length=40, blank=True, default="")

    class Meta:
        indexes = [
            models.Index(fields=["run", "name", "step"], name="metric_run_name_step"),
            # The non-finite points alone (a series read keeps every one): a few rows.
            models.Index(
                fields=["run", "name", "step"],
                name="metric_non_finite",
                condition=~models.Q(non_finite=""),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name}@{self.step}={self.as_float()}"

    def as_float(self) -> float:
        return (
            float(self.non_finite.replace("Infinity", "inf"))
            if self.non_finite
            else float(self.value or 0.0)
        )


class MetricSummary(models.Model):
    """One row per (run, metric): what the report, the alert scan and the compare page read
    instead of the points (docs/architecture.md, "Metric store"). Upserted in the ingest
    transaction by campaigns/services/metric_store.py; the rule is
    campaigns/domain/metric_rollups.py. Its id is the metric's small key within the run."""

    # The unique (run, name) constraint is its index.
    run = models.ForeignKey(
        Run, on_delete=models.CASCADE, related_name="metric_summaries", db_index=False
    )
    name = models.CharField(max_length=250)
    count = models.BigIntegerField()
    first_step = models.BigIntegerField()
    last_step = models.BigIntegerField()
    # The point at the largest step (the later-logged of equal steps). SQLite keeps NaN as
    # NULL, so the token says which non-finite value it was, as on the points.
    last_value = models.FloatField(null=True)
    last_token = models.CharField(max_length=9, blank=True, default="")
    min_value = models.FloatField(null=True)  # finite values only
    max_value = models.FloatField(null=True)
    non_finite = models.BigIntegerField(default=0)
    first_at = models.DateTimeField()
    last_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "name"], name="metric_summary_run_name")
        ]

    def __str__(self) -> str:
        return f"{self.name}: {self.count} points"


class MetricRollup(models.Model):
    """One metric's points in a bucket of 2^level steps (bucket = step >> level): count, the
    finite extremes with their steps, the first and last non-finite point. The series read at
    max_points takes one level's buckets instead of the points."""

    pk = models.CompositePrimaryKey("run", "summary", "level", "bucket")
    # The primary key (run first) is their index.
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="+", db_index=False)
    summary = models.ForeignKey(
        MetricSummary, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    level = models.PositiveSmallIntegerField()
    bucket = models.BigIntegerField()
    count = models.BigIntegerField()
    min_step = models.BigIntegerField(null=True)
    min_value = models.FloatField(null=True)
    max_step = models.BigIntegerField(null=True)
    max_value = models.FloatField(null=True)
    non_finite = models.BigIntegerField(default=0)
    first_nf_step = models.BigIntegerField(null=True)
    first_nf = models.CharField(max_length=9, blank=True, default="")
    last_nf_step = models.BigIntegerField(null=True)
    last_nf = models.CharField(max_length=9, blank=True, default="")

    def __str__(self) -> str:
        return f"{self.summary_id}@{self.level}:{self.bucket}"


class ThroughputSample(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="throughputs")
    samples_per_second = models.FloatField(null=True, blank=True)
    tokens_per_second = models.FloatField(null=True, blank=True)
    gpus = models.PositiveIntegerField(default=1)
    measured_seconds = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        unit = "tokens" if self.tokens_per_second else "samples"
        rate = self.tokens_per_second or self.samples_per_second
        return f"{rate} {unit}/s on {self.gpus} GPU(s)"


class Checkpoint(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="checkpoints")
    step = models.BigIntegerField()
    components = models.JSONField(default=list)
    size_bytes = models.BigIntegerField(null=True, blank=True)
    write_seconds = models.FloatField(null=True, blank=True)
    restore_seconds = models.FloatField(null=True, blank=True)
    location = models.CharField(max_length=500, blank=True)
    resume_verified = models.BooleanField(default=False)
    # Copied off the rented machine: a checkpoint only on the lot's disk ends with the lot.
    retrieved = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"checkpoint of {self.run_id} at step {self.step}"


# --- Idempotency ---------------------------------------------------------------------------


class IdempotencyRecord(models.Model):
    """The stored response of a POST sent with an Idempotency-Key, replayed on a retry."""

    principal = models.CharField(max_length=80)
    key = models.CharField(max_length=200)
    method = models.CharField(max_length=10)
    path = models.CharField(max_length=500)
    body_digest = models.CharField(max_length=64)
    status_code = models.PositiveSmallIntegerField(null=True)
    response_body = models.BinaryField(null=True)
    content_type = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["principal", "key"], name="idempotency_key_unique")
        ]

    def __str__(self) -> str:
        return f"{self.method} {self.path} ({self.key})"


# --- Run artifacts -------------------------------------------------------------------------


class RunArtifact(models.Model):
    """A file logged for a run (MLflow's artifacts), kept in Django's default storage.

    `sha256` and `size_bytes` are computed by the server while the upload streams in, so a
    deliverable can name the file by what was actually stored.
    """

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="artifacts")
    path = models.CharField(max_length=500, help_text="Relative to the run's artifact root.")
    size_bytes = models.BigIntegerField()
    sha256 = models.CharField(max_length=64)
    storage_name = models.CharField(max_length=1000, help_text="Name in the default storage.")
    content_type = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["path"]
        constraints = [
            models.UniqueConstraint(fields=["run", "path"], name="artifact_path_unique_in_run")
        ]

    def __str__(self) -> str:
        return f"{self.run_id}:{self.path}"

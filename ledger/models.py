"""The ledger (append-only money entries), deliverables with their checks, closing reports."""

from __future__ import annotations

import uuid
from decimal import Decimal
from typing import Any

import pgtrigger
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models
from django.utils import timezone

from campaigns.models import Campaign, Comparator, LotReservation, Run, RunHoursCorrection, Team
from campaigns.models.sealed import SealedTextField
from catalog.validators import currency_validator, no_bidi_controls


class LedgerImmutable(Exception):
    """Ledger entries are append-only: corrections are new entries that reverse old ones."""


class EntryKind(models.TextChoices):
    RENTAL = "rental", "Rental (committed lots)"
    INCLUDED = "included", "Included expense"
    EXTERNAL = "external", "External cost (listed apart)"


class LedgerEntry(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.PROTECT, related_name="ledger")
    kind = models.CharField(max_length=10, choices=EntryKind.choices)
    description = models.CharField(max_length=300)
    amount = models.DecimalField(max_digits=14, decimal_places=2)
    currency = models.CharField(max_length=3, validators=[currency_validator])
    reverses = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="reversed_by"
    )
    reservation = models.OneToOneField(
        LotReservation,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="ledger_entry",
        help_text="The committed lot this rental entry posts (once per lot).",
    )
    run = models.ForeignKey(
        Run,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="ledger_entries",
        help_text="The finished hourly run whose cost this rental entry posts (once per run "
        "segment: a resumed run posts each stretch's hours once).",
    )
    run_segment = models.PositiveSmallIntegerField(default=1)
    run_correction = models.OneToOneField(
        RunHoursCorrection,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="ledger_entry",
        help_text="The correction of a posted hourly run's hours this entry adjusts its cost "
        "for (once per correction; the amount may be negative).",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        verbose_name_plural = "ledger entries"
        constraints = [
            models.UniqueConstraint(
                fields=["run", "run_segment"], name="ledger_run_segment_posted_once"
            )
        ]
        # On PostgreSQL the database itself refuses updates and deletes, whatever the caller.
        triggers = [
            pgtrigger.Protect(
                name="ledger_append_only", operation=pgtrigger.Update | pgtrigger.Delete
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.amount} {self.currency}: {self.description}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None and not kwargs.get("force_insert"):
            raise LedgerImmutable("ledger entries are append-only; post a reversal instead")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> Any:
        raise LedgerImmutable("ledger entries are append-only; post a reversal instead")


class DeliverableKind(models.TextChoices):
    PREDICTIONS = "predictions", "Predictions"
    ERROR_ANALYSIS = "error_analysis", "Error analysis"
    ARTIFACT = "artifact", "Reloadable artifact"
    ADAPTER = "adapter", "Adapter"
    OTHER = "other", "Other"


class Deliverable(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="deliverables")
    kind = models.CharField(max_length=20, choices=DeliverableKind.choices)
    corpus_name = models.CharField(max_length=200)
    corpus_revision = models.CharField(max_length=200)
    run = models.ForeignKey(
        Run, null=True, blank=True, on_delete=models.PROTECT, related_name="deliverables"
    )
    expected_ids_ok = models.BooleanField(null=True, blank=True)
    reload_verified = models.BooleanField(null=True, blank=True)
    base_revision = models.CharField(max_length=200, blank=True)
    accepted = models.BooleanField(default=False)
    rejection_reasons = models.JSONField(default=list, blank=True)
    submitted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        verdict = "accepted" if self.accepted else "rejected"
        return f"{self.kind} for {self.corpus_name}@{self.corpus_revision} ({verdict})"


class DeliverableFile(models.Model):
    deliverable = models.ForeignKey(Deliverable, on_delete=models.CASCADE, related_name="files")
    path = models.CharField(max_length=1000)
    size_bytes = models.BigIntegerField()
    # Wider than a digest: a malformed one is kept as sent and named in the rejection reasons.
    sha256 = models.CharField(max_length=200)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.path} ({self.size_bytes} B)"


class ReportStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    READY = "ready", "Ready"
    FAILED = "failed", "Failed"


class Report(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="reports")
    status = models.CharField(
        max_length=10, choices=ReportStatus.choices, default=ReportStatus.PENDING
    )
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    html = models.TextField(blank=True)
    markdown = models.TextField(blank=True)
    data = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"Report #{self.pk} on {self.campaign} ({self.status})"

    @property
    def out_of_date(self) -> bool:
        """Built before the campaign closed: it still says "running" and lacks the conclusion
        (docs/domain.md §16); regenerating it is one click (the report list's action)."""
        closed_at = self.campaign.closed_at
        built = self.started_at or self.created_at
        return closed_at is not None and built is not None and built < closed_at


OUT_OF_DATE_NOTE = (
    "Out of date: this report was generated before the campaign closed; generate it again for "
    "the closing figures and the conclusion."
)


ZERO = Decimal("0.00")


# --- Alerts and their delivery (docs/domain.md §19) -------------------------------------------


class Alert(models.Model):
    """A condition found by a scan, stored once while it holds (`key` names it: the lot, the
    budget share, the run), or an event (a run stopped, failed, finished: resolved as raised);
    delivered on each of its team's channels (`deliveries`). `kind` is one of
    `ledger.domain.alerts.KINDS` (its words are there: a new kind needs no migration)."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="alerts")
    kind = models.CharField(max_length=40)
    key = models.CharField(max_length=200)
    message = models.TextField()
    run = models.ForeignKey(Run, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    raised_at = models.DateTimeField(auto_now_add=True)
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-raised_at", "-id"]
        constraints = [
            # One open alert per condition: the scan runs every few minutes and never repeats.
            models.UniqueConstraint(
                fields=["campaign", "kind", "key"],
                condition=models.Q(resolved_at__isnull=True),
                name="one_open_alert_per_condition",
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind}: {self.message[:60]}"

    def get_kind_display(self) -> str:
        from ledger.domain.alerts import label

        return label(self.kind)


class ChannelKind(models.TextChoices):
    """One transport module each (ledger/transports/<kind>.py)."""

    EMAIL = "email", "E-mail"
    WEBHOOK = "webhook", "Webhook (JSON, Standard Webhooks signature)"
    SLACK = "slack", "Slack (incoming webhook)"
    TEAMS = "teams", "Microsoft Teams (Workflows webhook)"


class AlertChannel(models.Model):
    """A destination of the team's alerts (docs/domain.md §19.4): an e-mail address (blank: the
    team's owners that have one, read at delivery) or a URL (webhook, Slack, Teams: the URL is
    the channel's secret, never shown back whole), and for a webhook its signing secret."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="alert_channels")
    kind = models.CharField(max_length=10, choices=ChannelKind.choices)
    name = models.CharField(max_length=100, blank=True, help_text="e.g. #desk-alerts")
    target = models.CharField(max_length=1000, blank=True)
    # Standard Webhooks' key, "whsec_" + base64; sealed at rest (docs/domain.md §26).
    secret = SealedTextField(blank=True)
    muted_kinds = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} {self.name}".strip()


class DeliveryState(models.TextChoices):
    PENDING = "pending", "Pending"
    SENDING = "sending", "Sending"
    SENT = "sent", "Sent"
    FAILED = "failed", "Failed (retried)"
    REFUSED = "refused", "Refused (not retried)"
    GAVE_UP = "gave_up", "Gave up"


class AlertDelivery(models.Model):
    """The outbox (docs/domain.md §19.5): one row per alert and channel, stored with the alert
    in its transaction, so no delivery is lost when enqueueing fails or Redis restarts; a
    worker claims due rows team by team and records each outcome. `delivery_id` travels with
    every attempt (`webhook-id`, the e-mail's Message-ID): a receiver drops a repeat."""

    alert = models.ForeignKey(Alert, on_delete=models.CASCADE, related_name="deliveries")
    channel = models.ForeignKey(
        AlertChannel, null=True, on_delete=models.SET_NULL, related_name="deliveries"
    )
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=10, choices=ChannelKind.choices)
    delivery_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    state = models.CharField(
        max_length=10, choices=DeliveryState.choices, default=DeliveryState.PENDING
    )
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(default=timezone.now)
    # When a worker took it: a claim older than ALERT_DELIVERY_LEASE_SECONDS is a dead worker's.
    claimed_at = models.DateTimeField(null=True, blank=True)
    # Written after the send returned, never before.
    sent_at = models.DateTimeField(null=True, blank=True)
    last_status = models.PositiveSmallIntegerField(null=True, blank=True)
    last_error = models.TextField(blank=True)

    class Meta:
        ordering = ["-next_attempt_at", "-id"]
        verbose_name_plural = "alert deliveries"
        constraints = [
            models.UniqueConstraint(fields=["alert", "channel"], name="one_delivery_per_channel")
        ]
        indexes = [models.Index(fields=["state", "next_attempt_at"], name="alert_delivery_due")]

    def __str__(self) -> str:
        return f"alert {self.alert_id} by {self.kind}: {self.state}"


class MetricThreshold(models.Model):
    """A threshold the team set on a metric: a running run crossing it raises a
    `metric_threshold` alert (docs/domain.md §19.1), once per run."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="metric_thresholds")
    metric = models.CharField(max_length=250, validators=[no_bidi_controls])
    comparator = models.CharField(max_length=2, choices=Comparator.choices)
    threshold = models.FloatField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["metric", "id"]

    def __str__(self) -> str:
        return f"{self.metric} {self.get_comparator_display()} {self.threshold:g}"


# --- Team budgets over periods (docs/domain.md §22) -------------------------------------------


class PeriodKind(models.TextChoices):
    MONTH = "month", "Month"
    QUARTER = "quarter", "Quarter"


class TeamAllowance(models.Model):
    """What a team may spend in one month or quarter: money and/or GPU-hours, optionally on one
    GPU model. The sums are `ledger.domain.team_budget`'s."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="allowances")
    period_kind = models.CharField(max_length=7, choices=PeriodKind.choices)
    period_start = models.DateField(help_text="First day of the month or quarter (UTC).")
    amount = models.DecimalField(
        max_digits=14, decimal_places=2, null=True, blank=True, validators=[MinValueValidator(0)]
    )
    currency = models.CharField(max_length=3, blank=True, validators=[currency_validator])
    gpu_hours = models.DecimalField(
        max_digits=12, decimal_places=2, null=True, blank=True, validators=[MinValueValidator(0)]
    )
    gpu_model = models.CharField(
        max_length=40, blank=True, help_text="Only this GPU model counts (blank: every GPU)."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["period_start", "period_kind", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["team", "period_kind", "period_start", "gpu_model"],
                name="one_allowance_per_team_period_gpu",
            ),
            models.CheckConstraint(
                condition=models.Q(amount__isnull=False) | models.Q(gpu_hours__isnull=False),
                name="allowance_states_money_or_hours",
            ),
        ]

    def __str__(self) -> str:
        from ledger.domain.team_budget import period_label

        return f"{self.team} {period_label(self.period_kind, self.period_start)}"  # type: ignore[arg-type]

    def clean(self) -> None:
        from ledger.domain.team_budget import is_period_start

        errors: dict[str, str] = {}
        if self.amount is None and self.gpu_hours is None:
            errors["amount"] = "state a money amount, GPU-hours, or both"
        if self.amount is not None and not self.currency:
            errors["currency"] = "a money allowance needs its currency"
        kind = self.period_kind
        known = bool(self.period_start) and kind in PeriodKind.values
        if known and not is_period_start(kind, self.period_start):  # type: ignore[arg-type]
            errors["period_start"] = f"the first day of a {kind}"
        if errors:
            raise ValidationError(errors)


class OidcIdentity(models.Model):
    """One account at the identity provider, named by its issuer and subject (the `iss` and
    `sub` of its ID tokens: the only claims the provider guarantees stable and unique), and the
    local user it signs in as (README "Single sign-on"). Never found by username or e-mail:
    a provider account becomes a new user at its first sign-in, or is linked to an existing
    one by that user, signed in. `granted_roles` (team id → role) is what the role mapping
    gave, so that a later sign-in takes away only those, never a role given by hand."""

    issuer = models.CharField(max_length=255)
    subject = models.CharField(max_length=255)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="oidc_identities"
    )
    granted_roles = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_sign_in_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["issuer", "subject"], name="one_user_per_identity")
        ]

    def __str__(self) -> str:
        return f"{self.subject} at {self.issuer}"


# --- Shared reports (docs/domain.md §16.4) -----------------------------------------------------


class ReportShare(models.Model):
    """A read-only link to one closing report for someone outside the team: a signed token
    (ledger/services/report_shares.py) naming this row and its nonce, good until `expires_at`
    and while not revoked; both are checked on every open."""

    report = models.ForeignKey(Report, on_delete=models.CASCADE, related_name="shares")
    note = models.CharField(max_length=200, blank=True, help_text="Who the link is for.")
    # Part of the signed token: a row's id alone (reused after a database restore) is not enough.
    nonce = models.CharField(max_length=32)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"share #{self.pk} of report #{self.report_id}"

"""The write path of the campaigns app: one function per domain action.

Each action is a plain, `@transaction.atomic` function taking keyword arguments and raising the
domain's exceptions (`PlanFrozen`, `CommitRefused`, `CampaignClosed`, Django's
`ValidationError` naming the field). The admin (forms, inlines, actions) and the API views both
call these functions and nothing else writes these models, so the two can never disagree. Where a
form must show a refusal beside its field before anything is written, it calls the action's
`check_*` function, which the action itself calls first: each rule is written once. The rules
are stated in docs/domain.md.

Upper layers hear of the events through campaigns/signals.py (the ledger posts the reserved lots
when a plan is committed), sent inside the action's transaction.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from campaigns.models import (
    AMENDABLE_ITEM_FIELDS,
    Amendment,
    ApiToken,
    Campaign,
    CampaignStatus,
    CommitRefused,
    DecisionPoint,
    IngestKey,
    ItemStatus,
    LotReservation,
    Outcome,
    PlanBaseline,
    PlanFrozen,
    PlannedItem,
    Run,
    RunKind,
    RunsStillRunning,
    RunStatus,
    Stage,
    StopRule,
    Tier,
)
from campaigns.selectors.observed_hours import reconciled
from campaigns.signals import (
    campaign_closed,
    observed_hours_recorded,
    plan_commit_requested,
    plan_committed,
)

# --- Campaigns -----------------------------------------------------------------------------

# What a committed plan still lets change: the plan itself is frozen (docs/domain.md §3).
EDITABLE_AFTER_COMMIT = frozenset({"expected_deliverables"})


def _locked(campaign: Campaign) -> Campaign:
    # FOR NO KEY UPDATE, not FOR UPDATE: the writers still queue behind each other, but the
    # foreign-key checks of rows referencing the campaign (the forecast task inserting an item's
    # estimate while it holds the estimate row) do not wait for it. With FOR UPDATE, a commit
    # waiting for the estimate row and the task waiting for the campaign row deadlocked.
    # One order for everyone: campaign (or plan row) first, then its estimates.
    return Campaign.objects.select_for_update(no_key=True).get(pk=campaign.pk)


@transaction.atomic
def create_campaign(*, user: Any = None, **fields: Any) -> Campaign:
    """A new draft campaign; `fields` are the model's (team, title, question, corpus_…)."""
    campaign = Campaign(created_by=user if getattr(user, "pk", None) else None, **fields)
    campaign.full_clean()
    campaign.save()
    return campaign


def check_campaign_change(campaign: Campaign, changed: Iterable[str]) -> None:
    """Refuse changes the campaign's state forbids: after commit the plan is frozen."""
    campaign.refuse_if_closed()
    frozen = sorted(set(changed) - EDITABLE_AFTER_COMMIT)
    if not campaign.is_draft and frozen:
        raise PlanFrozen(
            f"the campaign is {campaign.status}: its plan is frozen ({', '.join(frozen)} "
            "cannot change)"
        )


@transaction.atomic
def update_campaign(*, campaign: Campaign, user: Any = None, **changes: Any) -> Campaign:
    """Edit a draft campaign (after commit only what the plan does not freeze)."""
    locked = _locked(campaign)
    changed = [f for f, v in changes.items() if getattr(locked, f) != v]
    check_campaign_change(locked, changed)
    for field, value in changes.items():
        setattr(locked, field, value)
    locked.full_clean()
    locked.save()
    return locked


@transaction.atomic
def commit_plan(
    *, campaign: Campaign, user: Any = None, over_team_budget: bool = False
) -> PlanBaseline:
    """Freeze the plan: snapshot it into the baseline and mark the campaign committed.

    Receivers of `plan_commit_requested` may refuse it (the ledger, when it would take the
    team over an allowance and `over_team_budget` does not acknowledge it); receivers of
    `plan_committed` (the ledger posts the reserved lots) run in this transaction.
    """
    locked = _locked(campaign)
    if locked.status != CampaignStatus.DRAFT:
        raise PlanFrozen(f"campaign is already {locked.status}; the plan is frozen")
    problems = locked.commit_problems()
    if problems:
        raise CommitRefused(problems)
    plan_commit_requested.send(
        sender=Campaign, campaign=locked, user=_user(user), acknowledged=over_team_budget
    )
    baseline = PlanBaseline.objects.create(campaign=locked, snapshot=locked.snapshot())
    now = timezone.now()
    Campaign.objects.filter(pk=locked.pk).update(
        status=CampaignStatus.COMMITTED, committed_at=now, committed_by=_user(user), updated_at=now
    )
    locked.refresh_from_db()
    plan_committed.send(sender=Campaign, campaign=locked, baseline=baseline, user=_user(user))
    campaign.refresh_from_db()
    return baseline


def check_close(campaign: Campaign, *, conclusion: str, stop_running: bool = False) -> None:
    """Refuse a close the campaign's state forbids (docs/domain.md §15)."""
    if campaign.status == CampaignStatus.DRAFT:
        raise PlanFrozen("a draft campaign cannot be closed: commit its plan first")
    if campaign.status == CampaignStatus.CLOSED:
        raise PlanFrozen("the campaign is already closed")
    if not (conclusion or "").strip():
        raise ValidationError(
            {"conclusion": "say what the campaign concluded (a negative result is a conclusion)"}
        )
    running = list(
        campaign.runs.filter(status=RunStatus.RUNNING)
        .order_by("run_id")
        .values_list("run_id", flat=True)
    )
    if running and not stop_running:
        raise RunsStillRunning(running)


@transaction.atomic
def close_campaign(
    *, campaign: Campaign, user: Any = None, conclusion: str, stop_running: bool = False
) -> Campaign:
    """Close the campaign with its conclusion; running runs refuse it unless `stop_running`,
    which stops them with a reason naming the close (a dead machine never finishes its runs)."""
    locked = _locked(campaign)
    # The campaign's runs are locked too: a metric batch waiting on one of them sees the
    # campaign closed once this commits, never a half-closed campaign.
    list(Run.objects.select_for_update().filter(campaign=locked).values_list("pk", flat=True))
    check_close(locked, conclusion=conclusion, stop_running=stop_running)
    now = timezone.now()
    who = _user(user)
    by = f" by {who.get_username()}" if who is not None else ""
    for run in Run.objects.filter(campaign=locked, status=RunStatus.RUNNING):
        run.status = RunStatus.STOPPED
        run.stop_reason = f"stopped when the campaign was closed{by} at {now:%Y-%m-%d %H:%M} UTC"
        run.stop_step = run.last_step
        run.stopped_at = now
        run.save(update_fields=["status", "stop_reason", "stop_step", "stopped_at"])
    locked.status = CampaignStatus.CLOSED
    locked.conclusion = conclusion.strip()
    locked.closed_at = now
    locked.closed_by = who
    locked.save(update_fields=["status", "conclusion", "closed_at", "closed_by", "updated_at"])
    campaign_closed.send(sender=Campaign, campaign=locked, user=who)
    return locked


def _user(user: Any) -> Any:
    """A real user row, or None (an ingest key or an anonymous caller records no one)."""
    return user if getattr(user, "pk", None) else None


# --- Planned items -------------------------------------------------------------------------


def _jsonable(value: Any) -> Any:
    return str(value) if isinstance(value, Decimal) else value


def check_item(
    *,
    campaign: Campaign,
    item: PlannedItem | None = None,
    changes: dict[str, Any],
    amendment_reason: str = "",
) -> None:
    """Refuse an item change the plan forbids: after commit a new item, or a change of an
    amendable field, needs a reason; a closed campaign takes none; names are unique."""
    campaign.refuse_if_closed()
    name = changes.get("name")
    if name is not None:
        clash = PlannedItem.objects.filter(campaign=campaign, name=name)
        if item is not None and item.pk:
            clash = clash.exclude(pk=item.pk)
        if clash.exists():
            raise ValidationError({"name": "this campaign already has an item of that name"})
    if campaign.is_draft:
        return
    amended = [f for f in changes if f in AMENDABLE_ITEM_FIELDS]
    if (item is None or amended) and not (amendment_reason or "").strip():
        what = "is added" if item is None else f"changes ({', '.join(amended)})"
        raise ValidationError(
            {"amendment_reason": f"the plan is committed: say why this item {what}"}
        )


@transaction.atomic
def create_item(
    *, campaign: Campaign, user: Any = None, amendment_reason: str = "", **fields: Any
) -> PlannedItem:
    """Add a planned item: plainly while drafting; after commit as an amendment with a reason
    (the item and its amendment record in one transaction; the baseline untouched)."""
    locked = _locked(campaign)
    check_item(campaign=locked, changes=fields, amendment_reason=amendment_reason)
    item = PlannedItem(campaign=locked, **fields)
    item.full_clean()
    item._amendment = True  # type: ignore[attr-defined]
    item.save()
    if not locked.is_draft:
        Amendment.objects.create(
            campaign=locked,
            item=item,
            changes={"before": {}, "after": {f: _jsonable(getattr(item, f)) for f in fields}},
            reason=amendment_reason.strip(),
            made_by=_user(user),
        )
    return item


@transaction.atomic
def amend_item(
    *, item: PlannedItem, user: Any = None, reason: str = "", **changes: Any
) -> Amendment | None:
    """Change a planned item. While drafting it is an edit; after commit an amendment that
    records before, after and why (returned); the baseline stays as it was frozen."""
    locked = (
        PlannedItem.objects.select_for_update(no_key=True)
        .select_related("campaign")
        .get(pk=item.pk)
    )
    unknown = set(changes) - set(AMENDABLE_ITEM_FIELDS)
    if unknown:
        raise ValidationError({f: "this field cannot be changed here" for f in sorted(unknown)})
    changed = {f: v for f, v in changes.items() if getattr(locked, f) != v}
    if not changed:
        return None
    check_item(campaign=locked.campaign, item=locked, changes=changed, amendment_reason=reason)
    before = {f: _jsonable(getattr(locked, f)) for f in changed}
    for field, value in changed.items():
        setattr(locked, field, value)
    if "planned_hours" in changed:
        # Hours typed by hand are the planner's own figure, no longer a clone's lesson (§21).
        locked.calibrated_from = None
    locked.full_clean()
    locked._amendment = True  # type: ignore[attr-defined]
    locked.save()
    if locked.campaign.is_draft:
        return None
    return Amendment.objects.create(
        campaign=locked.campaign,
        item=locked,
        changes={"before": before, "after": {f: _jsonable(getattr(locked, f)) for f in changed}},
        reason=reason.strip(),
        made_by=_user(user),
    )


@transaction.atomic
def remove_item(*, item: PlannedItem, user: Any = None) -> None:
    """Delete a draft's item; a committed item is never deleted (cut it with a decision)."""
    locked = (
        PlannedItem.objects.select_for_update(no_key=True)
        .select_related("campaign")
        .get(pk=item.pk)
    )
    locked.delete()  # the model refuses after commit (PlanFrozen)


# --- Stop rules, stages and lots of a draft --------------------------------------------------


def check_draft(campaign: Campaign, what: str) -> None:
    """Stop rules, stages and lots are written while drafting and frozen with the plan."""
    campaign.refuse_if_closed()
    if not campaign.is_draft:
        raise PlanFrozen(f"{what} are frozen once the plan is committed")


def _add_draft_row(campaign: Campaign, what: str, row: Any) -> Any:
    check_draft(_locked(campaign), what)
    row.full_clean()
    row.save()
    return row


def _change_draft_row(row: Any, what: str, changes: dict[str, Any]) -> Any:
    check_draft(_locked(row.campaign), what)
    for field, value in changes.items():
        setattr(row, field, value)
    row.full_clean()
    row.save()
    return row


def _remove_draft_row(row: Any, what: str) -> None:
    check_draft(_locked(row.campaign), what)
    row.delete()


@transaction.atomic
def add_stop_rule(*, campaign: Campaign, user: Any = None, **fields: Any) -> StopRule:
    """A stop rule, written before the runs (docs/domain.md §4); refused after commit."""
    rule: StopRule = _add_draft_row(campaign, "stop rules", StopRule(campaign=campaign, **fields))
    return rule


@transaction.atomic
def change_stop_rule(*, rule: StopRule, user: Any = None, **changes: Any) -> StopRule:
    changed: StopRule = _change_draft_row(rule, "stop rules", changes)
    return changed


@transaction.atomic
def remove_stop_rule(*, rule: StopRule, user: Any = None) -> None:
    _remove_draft_row(rule, "stop rules")


@transaction.atomic
def add_stage(
    *, campaign: Campaign, user: Any = None, depends_on: Sequence[Stage] = (), **fields: Any
) -> Stage:
    """A calendar stage of the draft plan (observed hours come after commit, separately)."""
    locked = _locked(campaign)
    check_draft(locked, "calendar stages")
    stage = Stage(campaign=locked, **fields)
    _check_stage_links(stage, depends_on)
    stage.full_clean()
    stage.save()
    stage.depends_on.set(depends_on)
    return stage


@transaction.atomic
def change_stage(
    *, stage: Stage, user: Any = None, depends_on: Sequence[Stage] | None = None, **changes: Any
) -> Stage:
    check_draft(_locked(stage.campaign), "calendar stages")
    if "planned_hours" in changes and changes["planned_hours"] != stage.planned_hours:
        # Hours typed by hand are the planner's own figure, no longer a clone's lesson (§21).
        stage.calibrated_from = None
    for field, value in changes.items():
        setattr(stage, field, value)
    _check_stage_links(stage, depends_on or ())
    stage.full_clean()
    stage.save()
    if depends_on is not None:
        stage.depends_on.set(depends_on)
    return stage


@transaction.atomic
def remove_stage(*, stage: Stage, user: Any = None) -> None:
    check_draft(_locked(stage.campaign), "calendar stages")
    stage.delete()


def _check_stage_links(stage: Stage, depends_on: Iterable[Stage]) -> None:
    variant = stage.variant if stage.variant_id is not None else None
    if variant is not None and variant.campaign_id != stage.campaign_id:
        raise ValidationError({"variant": "that item is not in this campaign"})
    for other in depends_on:
        if other.campaign_id != stage.campaign_id:
            raise ValidationError({"depends_on": f"stage {other.pk} is not in this campaign"})
        if stage.pk is not None and other.pk == stage.pk:
            raise ValidationError({"depends_on": "a stage cannot depend on itself"})


@transaction.atomic
def reserve_lot(*, campaign: Campaign, user: Any = None, **fields: Any) -> LotReservation:
    """Reserve rental lots for the draft plan; commit posts them to the ledger once."""
    lot: LotReservation = _add_draft_row(
        campaign, "reserved lots", LotReservation(campaign=campaign, **fields)
    )
    return lot


@transaction.atomic
def change_lot(*, lot: LotReservation, user: Any = None, **changes: Any) -> LotReservation:
    changed: LotReservation = _change_draft_row(lot, "reserved lots", changes)
    return changed


@transaction.atomic
def release_lot(*, lot: LotReservation, user: Any = None) -> None:
    _remove_draft_row(lot, "reserved lots")


# --- Observed hours ---------------------------------------------------------------------------


def planned_hours_of(stage: Stage) -> Decimal:
    """The stage's reserved hours as the baseline froze them.

    A stage added after commit was never reserved: zero, so any hours it took are a deviation
    to explain.
    """
    baseline = stage.campaign.baseline_or_none()
    if baseline is None:
        return Decimal(stage.planned_hours)
    for frozen in baseline.snapshot.get("stages", []):
        if frozen.get("id") == stage.pk:
            return Decimal(frozen["planned_hours"])
    return Decimal(0)


def check_takes_observed_hours(campaign: Campaign) -> None:
    campaign.refuse_if_closed()
    if campaign.is_draft:
        raise PlanFrozen(
            "the plan is still a draft: commit it first, observed hours are compared with the "
            "frozen baseline"
        )


def check_observed_hours(
    *, stage: Stage, observed_hours: Decimal, deviation_note: str, observed_reason: str = ""
) -> None:
    """Observed hours are set beside the frozen plan: after commit, never after close, and more
    than 10% away from the frozen figure needs a deviation note (docs/domain.md §8). Where the
    stage's runs already give a figure, a different typed one needs the reason, once (§8.6)."""
    check_takes_observed_hours(stage.campaign)
    if observed_hours < 0:
        raise ValidationError({"observed_hours": "hours cannot be negative"})
    planned = planned_hours_of(stage)
    # The model's rule, applied to the frozen figure rather than to whatever the row says now.
    if (
        Stage(planned_hours=planned).needs_deviation_note(observed_hours)
        and not (deviation_note or "").strip()
    ):
        raise ValidationError(
            {
                "deviation_note": (
                    f"{observed_hours} h observed for {planned} h planned is more than 10% "
                    "away from the plan: explain the deviation"
                )
            }
        )
    seen = reconciled(stage.campaign).stages.get(stage.pk)
    runs_hours = seen.runs_hours if seen is not None else None
    if (
        runs_hours is not None
        and observed_hours != runs_hours
        and not (observed_reason or "").strip()
        and not (seen is not None and seen.reason.strip())
    ):
        raise ValidationError(
            {
                "observed_reason": (
                    f"the runs on this stage's item took {runs_hours} h: say why the stage "
                    f"took {observed_hours} h (asked once, kept with the figure)"
                )
            }
        )


@transaction.atomic
def record_observed_hours(
    *,
    stage: Stage,
    user: Any = None,
    observed_hours: Decimal,
    deviation_note: str = "",
    observed_reason: str = "",
) -> Stage:
    """Store what a stage really took, beside (never into) the frozen plan: the runs give it
    where the stage has any (docs/domain.md §8.6); a typed figure that differs keeps its reason."""
    locked = (
        Stage.objects.select_for_update(no_key=True).select_related("campaign").get(pk=stage.pk)
    )
    check_observed_hours(
        stage=locked,
        observed_hours=observed_hours,
        deviation_note=deviation_note,
        observed_reason=observed_reason,
    )
    note = (deviation_note or "").strip()
    reason = (observed_reason or "").strip() or locked.observed_reason
    now = timezone.now()
    # update() touches only these columns: the plan's own fields stay as they were frozen.
    Stage.objects.filter(pk=locked.pk).update(
        observed_hours=observed_hours, deviation_note=note, observed_reason=reason, observed_at=now
    )
    locked.observed_hours, locked.deviation_note, locked.observed_at = observed_hours, note, now
    locked.observed_reason = reason
    observed_hours_recorded.send(sender=Stage, stage=locked)
    return locked


# --- Decisions ------------------------------------------------------------------------------


def check_decision(
    *,
    campaign: Campaign,
    outcome: str,
    rationale: str,
    cut_variants: Sequence[PlannedItem] = (),
) -> None:
    """A decision says why; a cut names the optional items it cuts (docs/domain.md §6)."""
    campaign.refuse_if_closed()
    if outcome not in (Outcome.CONTINUE, Outcome.CUT, Outcome.REVISE):
        raise ValidationError({"outcome": "a decision is continue, cut or revise"})
    if outcome == Outcome.CUT and not cut_variants:
        raise ValidationError({"cut_variants": "a cut names the items it cuts"})
    if outcome != Outcome.CUT and cut_variants:
        raise ValidationError({"cut_variants": "only a 'cut' decision cuts items"})
    for item in cut_variants:
        if item.campaign_id != campaign.pk:
            raise ValidationError({"cut_variants": f"item {item.pk} is not in this campaign"})
        if item.tier == Tier.MANDATORY:
            raise ValidationError(
                {"cut_variants": f"'{item.name}' is mandatory: revise the question instead"}
            )
    if not (rationale or "").strip():
        raise ValidationError({"rationale": "a decision says why"})


@transaction.atomic
def record_decision(
    *,
    campaign: Campaign,
    user: Any = None,
    outcome: str,
    rationale: str,
    cut_variants: Sequence[PlannedItem] = (),
    label: str = "after the pilot",
) -> DecisionPoint:
    """Record who decided what and why; a cut item keeps its row with status `cut`."""
    locked = _locked(campaign)
    check_decision(campaign=locked, outcome=outcome, rationale=rationale, cut_variants=cut_variants)
    label = (label or "").strip() or "after the pilot"
    # Fill the planned (pending) decision point with this label, if there is one.
    decision = locked.decisions.filter(outcome=Outcome.PENDING, label=label).order_by(
        "id"
    ).first() or DecisionPoint(campaign=locked, label=label)
    decision.outcome = outcome
    decision.rationale = rationale.strip()
    decision.decided_by = _user(user)
    decision.decided_at = timezone.now()
    decision.save()
    if cut_variants:
        decision.cut_variants.set(cut_variants)
        PlannedItem.objects.filter(pk__in=[i.pk for i in cut_variants]).update(
            status=ItemStatus.CUT
        )
    return decision


@transaction.atomic
def plan_decision_point(
    *, campaign: Campaign, user: Any = None, label: str, rationale: str = ""
) -> DecisionPoint:
    """A pending decision point in the plan (e.g. "after the pilot"), filled later; its
    `rationale` is the planner's note until then (what the decision will weigh)."""
    locked = _locked(campaign)
    locked.refuse_if_closed()
    if not (label or "").strip():
        raise ValidationError({"label": "name the point, e.g. 'after the pilot'"})
    return DecisionPoint.objects.create(
        campaign=locked, label=label.strip(), rationale=(rationale or "").strip()
    )


@transaction.atomic
def note_decision_point(
    *, decision: DecisionPoint, user: Any = None, label: str, rationale: str = ""
) -> DecisionPoint:
    """Rename a pending decision point or change its note; a taken decision is a record."""
    locked = (
        DecisionPoint.objects.select_for_update().select_related("campaign").get(pk=decision.pk)
    )
    locked.campaign.refuse_if_closed()
    if locked.outcome != Outcome.PENDING:
        raise ValidationError("A decision is a record: add a new decision instead.")
    if not (label or "").strip():
        raise ValidationError({"label": "name the point, e.g. 'after the pilot'"})
    locked.label, locked.rationale = label.strip(), (rationale or "").strip()
    locked.save(update_fields=["label", "rationale"])
    return locked


# --- Ingest keys ---------------------------------------------------------------------------


@transaction.atomic
def issue_ingest_key(
    *,
    campaign: Campaign,
    user: Any = None,
    name: str = "training loop",
    item: PlannedItem | None = None,
    kind: str = "",
) -> tuple[IngestKey, str]:
    """A new ingest key for `campaign`; the raw key is returned once and never stored.

    Bound to `item` (one of the campaign's planned items, not cut) and `kind` (a run kind, or
    blank), the key lets an MLflow loop open runs without naming them (docs/mlflow.md).
    Raises ValidationError naming `item` or `kind`.
    """
    if item is not None:
        if item.campaign_id != campaign.pk:
            raise ValidationError({"item": f"item {item.pk} is not in this campaign"})
        if item.status == ItemStatus.CUT:
            raise ValidationError({"item": f"'{item.name}' was cut by a decision"})
    if kind and kind not in RunKind.values:
        raise ValidationError({"kind": f"a run kind is one of {', '.join(RunKind.values)}"})
    return IngestKey.issue(campaign, name=name, user=user, item=item, kind=kind)


@transaction.atomic
def issue_api_token(
    *, user: Any, name: str = "", expires_at: datetime | None = None
) -> tuple[ApiToken, str]:
    """A new API token for `user` (`Authorization: Token <key>`); the raw key is returned once
    and only its digest is stored (docs/domain.md §26). Past `expires_at` it signs in nobody."""
    return ApiToken.issue(user, name=name, expires_at=expires_at)


@transaction.atomic
def revoke_ingest_keys(
    *, campaign: Campaign, user: Any = None, keys: Sequence[IngestKey] | None = None
) -> int:
    """Revoke every active key of `campaign` (a leaked key goes with its siblings), or only
    `keys` (the API revokes one key by id). Returns how many were active."""
    active = campaign.ingest_keys.filter(revoked_at__isnull=True)
    if keys is not None:
        active = active.filter(pk__in=[k.pk for k in keys])
    return active.update(revoked_at=timezone.now())

"""Checkpoints of a run (docs/domain.md §11): stored, checked against the campaign's
`no_usable_resume` rule, and marked copied off the rented machine. A checkpoint is a sign of
life of its run (§5.8). Taken after a stop (they say where to resume), not after a finish."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from campaigns.domain import stop_rules as rules
from campaigns.models import Campaign, Checkpoint, Run, RunStatus
from campaigns.services import run_clock
from campaigns.services.ingest import locked, refuse_if_finished
from campaigns.services.run_events import save_heard
from campaigns.services.stop_checks import record_stop, rule_specs


@transaction.atomic
def record_checkpoint(run: Run, **facts: Any) -> tuple[Checkpoint, rules.Firing | None]:
    """Store a checkpoint and stop the run when it is not a usable resume.

    Unusable: a component the campaign requires is missing, the reload was not verified in a
    new process, or its step is behind the previous checkpoint's (resuming from it would replay
    or lose work). The metric steps are not compared: a loop logs past a checkpoint's step
    while that checkpoint is still being written.
    """
    run = locked(run)
    now = timezone.now()
    fields = run_clock.revive_if_silent(run, now)
    refuse_if_finished(run)
    previous = Checkpoint.objects.filter(run=run).aggregate(step=Max("step"))["step"]
    checkpoint = Checkpoint.objects.create(run=run, **facts)
    firing = None
    if run.status == RunStatus.RUNNING:
        campaign = Campaign.objects.only("required_checkpoint_components").get(pk=run.campaign_id)
        required = frozenset(campaign.required_checkpoint_components or []) & rules.COMPONENTS
        firing = rules.evaluate_checkpoint(
            rule_specs(run.campaign_id),
            rules.CheckpointFacts(
                step=checkpoint.step,
                components=frozenset(checkpoint.components),
                resume_verified=checkpoint.resume_verified,
            ),
            required_components=required,
            last_logged_step=previous,
        )
    if run.last_step is None or checkpoint.step > run.last_step:
        run.last_step = checkpoint.step
        fields.append("last_step")
    if firing is not None:
        fields += record_stop(run, firing, now)
    save_heard(run, fields, now)
    checkpoint.run = run
    return checkpoint, firing


@transaction.atomic
def mark_checkpoint_retrieved(run: Run, checkpoint_id: int) -> Checkpoint:
    """Mark one of the run's checkpoints copied off the rented machine (docs/domain.md §19: the
    `checkpoint_not_retrieved` alert resolves at the next scan). Taken after the run ended too:
    a checkpoint is usually copied once training stops; marking it twice changes nothing.
    Raises Checkpoint.DoesNotExist when the run has no such checkpoint."""
    checkpoint = Checkpoint.objects.select_for_update().get(run=run, pk=checkpoint_id)
    if not checkpoint.retrieved:
        checkpoint.retrieved = True
        checkpoint.save(update_fields=["retrieved"])
    return checkpoint

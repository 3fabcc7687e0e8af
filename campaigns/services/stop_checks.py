"""The stop rules a write of run data is checked against (docs/domain.md §4, §18.3): the
campaign's rules as campaigns/domain/stop_rules.py takes them (a committed campaign's read once
per process), the budget rule on the campaign's spend, and a firing recorded on the run.
Split from campaigns/services/ingest.py, which applies them."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from campaigns import signals
from campaigns.domain import stop_rules as rules
from campaigns.models import Campaign, Run, RunStatus, StopRule

log = logging.getLogger(__name__)

# A committed campaign's stop rules never change (docs/domain.md §4.2), so each process keeps
# them once per (campaign, commit moment) and a log call spares the statement. The commit
# moment is in the key because a campaign is only committed once, and so that a reused id (a
# test database rolled back) is never mistaken for the campaign it once named.
_COMMITTED_RULES: dict[tuple[int, Any], list[rules.StopRuleSpec]] = {}
_COMMITTED_RULES_MAX = 1024


def rule_specs(campaign_id: int, committed_at: Any = None) -> list[rules.StopRuleSpec]:
    """The campaign's stop rules as rules.py takes them; an unusable one is logged and skipped
    (the API refuses those, but an old row must not stop every batch with a 500). Given the
    campaign's commit moment, read once per process."""
    if committed_at is None:
        return _load_rule_specs(campaign_id)
    key = (campaign_id, committed_at)
    specs = _COMMITTED_RULES.get(key)
    if specs is None:
        if len(_COMMITTED_RULES) >= _COMMITTED_RULES_MAX:
            _COMMITTED_RULES.clear()
        specs = _COMMITTED_RULES[key] = _load_rule_specs(campaign_id)
    return specs


def _load_rule_specs(campaign_id: int) -> list[rules.StopRuleSpec]:
    specs = []
    for rule in StopRule.objects.filter(campaign_id=campaign_id).order_by("id"):
        try:
            specs.append(
                rules.StopRuleSpec(
                    id=rule.pk,
                    kind=rule.kind,  # type: ignore[arg-type]
                    metric=rule.metric,
                    comparator=rule.comparator or None,  # type: ignore[arg-type]
                    threshold=rule.threshold,
                    description=rule.description,
                    grace=rule.grace,
                )
            )
        except ValueError as exc:
            log.warning("stop rule %s is unusable and was skipped: %s", rule.pk, exc)
    return specs


def budget_firing(run: Run, specs: Sequence[rules.StopRuleSpec], now: Any) -> rules.Firing | None:
    """The budget_overrun rule on the campaign's spend so far (docs/domain.md §18).

    The spend is asked of the layers above (signals.spend_requested: the ledger answers with
    its incurred total plus the hourly accrual not yet posted); this app never reads the ledger.
    Only asked when the campaign has such a rule and a budget: the hot path stays one query.
    """
    if not any(spec.kind == "budget_overrun" for spec in specs):
        return None
    campaign = Campaign.objects.only("budget", "currency").get(pk=run.campaign_id)
    if campaign.budget is None:
        return None
    answers: list[Decimal] = []
    for _receiver, answer in signals.spend_requested.send(
        sender=Campaign, campaign_id=run.campaign_id, now=now
    ):
        spent: object = answer
        if isinstance(spent, Decimal):
            answers.append(spent)
    if not answers:
        return None
    return rules.evaluate_spend(specs, sum(answers, Decimal(0)), campaign.budget, campaign.currency)


# The run's fields a stop sets.
STOP_FIELDS = ("status", "stop_rule", "stop_reason", "stop_step", "stopped_at")


def record_stop(run: Run, firing: rules.Firing, now: Any) -> list[str]:
    """Stop the locked `run` as `firing` says (the caller saves it); the fields it set."""
    run.status = RunStatus.STOPPED
    run.stop_rule_id = firing.rule_id
    run.stop_reason = firing.reason
    # A budget firing has no step of its own: the run stops where it had got to.
    run.stop_step = firing.step if firing.step is not None else run.last_step
    run.stopped_at = now
    # The ledger tells the team, in this transaction (docs/domain.md §19.7).
    signals.run_stopped.send(sender=Run, run=run)
    return list(STOP_FIELDS)

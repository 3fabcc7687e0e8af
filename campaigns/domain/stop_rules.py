"""Stop-rule evaluation for training runs (pure: no Django, no I/O).

Stop rules are written before the runs (docs/domain.md §4). This module decides whether a rule
fires on facts the API has already received; storing the firing (run id + reason) is the caller's
job. Every firing carries a reason in plain words, naming the rule, e.g.
``"loss is NaN at step 120 (rule #3: non-finite loss)"``.

Rule kinds and when they fire:

``non_finite_loss``
    A metric point named like the rule's metric (default ``"loss"``) is NaN, +Inf or -Inf.
``metric_threshold``
    ``value <comparator> threshold`` holds (``lt`` <, ``le`` <=, ``gt`` >, ``ge`` >=). NaN never
    satisfies a threshold, whatever the comparator. Infinities compare mathematically: +Inf
    satisfies ``gt``/``ge`` and -Inf satisfies ``lt``/``le`` for every finite threshold. The
    threshold itself must be finite.
``input_truncated``
    A point named like the rule's metric (default: ``"input_truncated"`` or its alias
    ``"truncated_inputs"``) has a value > 0: a count, or a 0/1 flag, of essential inputs that
    were truncated. NaN is not > 0 and does not fire.
``no_usable_resume``
    A checkpoint lacks a component the campaign requires, was not verified by a reload in a new
    process, or is behind the step the run already reached (see ``evaluate_checkpoint``).
``budget_overrun``
    Observed hours exceed the reserved hours, or money spent exceeds the budget (strictly). On
    ingest (``evaluate_spend``) the rule's ``threshold`` is a fraction of the budget (default
    1.0): spend strictly beyond ``budget × threshold`` fires (docs/domain.md §18).
``custom``
    Free text applied by a person through the stop endpoint; never fires automatically.
``idle_gpu``
    Every GPU of a running run stayed under ``threshold`` percent utilisation for the rule's
    minutes: fired by the alert scan on the run's ``system/gpu_*_utilization_percentage``
    points (ledger/domain/alerts.py), never on a batch.

Grace (docs/domain.md §4.6): a rule may state how long the loop goes on after it fired, so the
loop can reach and save a checkpoint: ``grace_steps`` optimizer steps after the firing step and
``grace_minutes`` wall minutes after the stop (0: not given). Within it the stopped run still
takes points (``within_grace``); the window closes at the first limit given that is reached. The
grace is part of the rule, so it is written before the runs and frozen at commit like the rule.

Units: steps are optimizer steps as logged by the training loop (integers >= 0); hours are wall
hours; grace minutes are whole wall minutes; money is ``Decimal`` in the campaign's currency
(never float).

When several rules could fire, the first firing wins: metric points are taken in step order, then
in input order for equal steps, and at one point rules are tried in the order given.
"""

import math
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal

from campaigns.domain.stop_rule_budget import evaluate_budget, evaluate_spend
from campaigns.domain.stop_rule_grace import (
    MAX_GRACE_MINUTES,
    MAX_GRACE_STEPS,
    NO_GRACE,
    Grace,
    grace_problems,
    grace_seconds_left,
    grace_until_step,
    within_grace,
)
from campaigns.domain.stop_rule_spec import (
    _NON_FINITE_TOKENS,
    COMPARATOR_WORDS,
    COMPARATORS,
    COMPONENT_ORDER,
    COMPONENTS,
    DEFAULT_LOSS_METRIC,
    DEFAULT_REQUIRED_COMPONENTS,
    RULE_KIND_LABELS,
    RULE_KINDS,
    TRUNCATION_METRICS,
    Comparator,
    Firing,
    RuleKind,
    StopRuleSpec,
    rule_problems,
)


@dataclass(frozen=True)
class MetricPoint:
    """One logged value. ``value`` may be NaN or +/-Inf: those are facts, not errors."""

    name: str
    step: int
    value: float

    def __post_init__(self) -> None:
        if isinstance(self.step, bool) or not isinstance(self.step, int) or self.step < 0:
            raise ValueError(f"step must be an integer >= 0, not {self.step!r}")
        if isinstance(self.value, bool) or not isinstance(self.value, int | float):
            raise ValueError(f"value must be a float (use parse_metric_value), not {self.value!r}")


@dataclass(frozen=True)
class CheckpointFacts:
    """What a logged checkpoint claims: its step, saved components, and a verified reload."""

    step: int
    components: frozenset[str]
    resume_verified: bool

    def __post_init__(self) -> None:
        if isinstance(self.step, bool) or not isinstance(self.step, int) or self.step < 0:
            raise ValueError(f"step must be an integer >= 0, not {self.step!r}")
        unknown = self.components - COMPONENTS
        if unknown:
            raise ValueError(
                f"unknown checkpoint components: {', '.join(sorted(unknown))}; "
                f"expected among {', '.join(COMPONENT_ORDER)}"
            )


def format_metric_value(value: float) -> str:
    """Render a value the way the API accepts it back: NaN, Infinity, -Infinity, or repr."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return repr(float(value))


def parse_metric_value(raw: object) -> float:
    """Read a metric value from JSON: a number, or the NaN/Infinity/-Infinity tokens as strings.

    Accepts int, float and Decimal (a JSON parser may produce any of them), and the strings
    NaN, Infinity, +Infinity, -Infinity, inf, +inf, -inf, nan in any letter case. Rejects bool
    (JSON true is not a measurement), None, numeric strings and anything else with ValueError.
    """
    if isinstance(raw, bool) or raw is None:
        raise ValueError(f"a metric value must be a number, not {raw!r}")
    if isinstance(raw, int | float | Decimal):
        try:
            return float(raw)
        except OverflowError as exc:
            raise ValueError(f"metric value {raw!r} is too large for a float") from exc
    if isinstance(raw, str):
        token = _NON_FINITE_TOKENS.get(raw.lower())
        if token is not None:
            return token
        raise ValueError(
            f"a metric value string must be NaN, Infinity or -Infinity, not {raw!r}; "
            "send finite values as JSON numbers"
        )
    raise ValueError(f"a metric value must be a number, not {type(raw).__name__}")


def _satisfies(value: float, comparator: Comparator, threshold: float) -> bool:
    # Explicit, although every IEEE comparison with NaN is already false: this is the one
    # property a stop rule must never lose to a refactor.
    if math.isnan(value):
        return False
    if comparator == "lt":
        return value < threshold
    if comparator == "le":
        return value <= threshold
    if comparator == "gt":
        return value > threshold
    return value >= threshold


def _firing_at_point(rule: StopRuleSpec, point: MetricPoint) -> Firing | None:
    # The value is put in words only when the rule fires: every point of a batch is checked.
    if rule.kind == "non_finite_loss":
        if math.isfinite(point.value):
            return None
        shown = format_metric_value(point.value)
        reason = f"{point.name} is {shown} at step {point.step} ({rule.label})"
    elif rule.kind == "metric_threshold":
        # Both are guaranteed by StopRuleSpec validation; the check narrows the types.
        if rule.comparator is None or rule.threshold is None:
            return None
        if not _satisfies(point.value, rule.comparator, rule.threshold):
            return None
        reason = (
            f"{point.name} is {format_metric_value(point.value)} at step {point.step}, "
            f"{COMPARATOR_WORDS[rule.comparator]} the threshold "
            f"{format_metric_value(rule.threshold)} ({rule.label})"
        )
    elif rule.kind == "input_truncated":
        if not point.value > 0:
            return None
        reason = (
            f"{point.name} is {format_metric_value(point.value)} at step {point.step}: "
            f"essential inputs were truncated ({rule.label})"
        )
    else:
        return None
    return Firing(rule_id=rule.id, kind=rule.kind, reason=reason, step=point.step, grace=rule.grace)


def evaluate_points(rules: Iterable[StopRuleSpec], points: Iterable[MetricPoint]) -> Firing | None:
    """The first firing among metric points, in step order then input order; None if none."""
    watchers: dict[str, list[StopRuleSpec]] = {}
    for rule in rules:
        for name in rule.metric_names:
            watchers.setdefault(name, []).append(rule)
    if not watchers:
        return None
    # sorted() is stable, so points at the same step keep the order the loop sent them in.
    for point in sorted(points, key=lambda p: p.step):
        for rule in watchers.get(point.name, ()):
            firing = _firing_at_point(rule, point)
            if firing is not None:
                return firing
    return None


def evaluate_checkpoint(
    rules: Iterable[StopRuleSpec],
    checkpoint: CheckpointFacts,
    required_components: frozenset[str] = DEFAULT_REQUIRED_COMPONENTS,
    last_logged_step: int | None = None,
) -> Firing | None:
    """Fire the first ``no_usable_resume`` rule when this checkpoint cannot resume the run.

    The checkpoint is unusable when a required component is missing (each is named), when its
    reload was not verified in a new process, or when its step is behind ``last_logged_step``
    (the step the run had already reached when the checkpoint was logged: resuming from it would
    silently lose or replay that work). All problems are listed in one reason.
    """
    unknown = required_components - COMPONENTS
    if unknown:
        raise ValueError(f"unknown required components: {', '.join(sorted(unknown))}")
    rule = next((r for r in rules if r.kind == "no_usable_resume"), None)
    if rule is None:
        return None
    problems: list[str] = []
    missing = [c for c in COMPONENT_ORDER if c in required_components - checkpoint.components]
    if missing:
        problems.append(f"missing {', '.join(missing)}")
    if not checkpoint.resume_verified:
        problems.append("resume not verified by a reload in a new process")
    if last_logged_step is not None and checkpoint.step < last_logged_step:
        problems.append(f"step {checkpoint.step} is behind step {last_logged_step} already logged")
    if not problems:
        return None
    reason = (
        f"checkpoint at step {checkpoint.step} is not a usable resume: "
        f"{'; '.join(problems)} ({rule.label})"
    )
    return Firing(
        rule_id=rule.id, kind=rule.kind, reason=reason, step=checkpoint.step, grace=rule.grace
    )


__all__ = [
    "COMPARATORS",
    "COMPARATOR_WORDS",
    "COMPONENTS",
    "COMPONENT_ORDER",
    "DEFAULT_LOSS_METRIC",
    "DEFAULT_REQUIRED_COMPONENTS",
    "MAX_GRACE_MINUTES",
    "MAX_GRACE_STEPS",
    "NO_GRACE",
    "RULE_KINDS",
    "RULE_KIND_LABELS",
    "TRUNCATION_METRICS",
    "_NON_FINITE_TOKENS",
    "Comparator",
    "Firing",
    "Grace",
    "RuleKind",
    "StopRuleSpec",
    "evaluate_budget",
    "evaluate_spend",
    "grace_problems",
    "grace_seconds_left",
    "grace_until_step",
    "rule_problems",
    "within_grace",
]

"""Stop rules as registered before the runs (docs/domain.md §4): their kinds, the words that
name them, the check of a definition (``rule_problems``), ``StopRuleSpec`` and a ``Firing``.
Pure; re-exported by campaigns/domain/stop_rules.py, which evaluates them."""

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal, get_args

from campaigns.domain.stop_rule_grace import NO_GRACE, Grace, grace_problems

RuleKind = Literal[
    "non_finite_loss",
    "metric_threshold",
    "input_truncated",
    "no_usable_resume",
    "budget_overrun",
    "custom",
    "idle_gpu",
]
Comparator = Literal["lt", "le", "gt", "ge"]

RULE_KINDS: Final[tuple[RuleKind, ...]] = get_args(RuleKind)
COMPARATORS: Final[tuple[Comparator, ...]] = get_args(Comparator)

RULE_KIND_LABELS: Final[dict[RuleKind, str]] = {
    "non_finite_loss": "non-finite loss",
    "metric_threshold": "metric threshold",
    "input_truncated": "essential input truncated",
    "no_usable_resume": "no usable resume",
    "budget_overrun": "budget or time overrun",
    "custom": "custom rule",
    "idle_gpu": "idle GPU",
}

COMPARATOR_WORDS: Final[dict[Comparator, str]] = {
    "lt": "below",
    "le": "at or below",
    "gt": "above",
    "ge": "at or above",
}

DEFAULT_LOSS_METRIC: Final = "loss"
TRUNCATION_METRICS: Final[frozenset[str]] = frozenset({"input_truncated", "truncated_inputs"})

# Order matters only for messages: missing components are named in this, the API's, order.
COMPONENT_ORDER: Final[tuple[str, ...]] = (
    "model",
    "optimizer",
    "progress",
    "scheduler",
    "scaler",
    "rng",
    "data_position",
)
COMPONENTS: Final[frozenset[str]] = frozenset(COMPONENT_ORDER)
# Weights alone cannot resume training: optimizer state and progress are needed too
# (docs/domain.md §11).
DEFAULT_REQUIRED_COMPONENTS: Final[frozenset[str]] = frozenset({"model", "optimizer", "progress"})

_NON_FINITE_TOKENS: Final[dict[str, float]] = {
    "nan": math.nan,
    "inf": math.inf,
    "+inf": math.inf,
    "-inf": -math.inf,
    "infinity": math.inf,
    "+infinity": math.inf,
    "-infinity": -math.inf,
}


def _metric_threshold_problems(
    metric: str, comparator: str | None, threshold: float | None
) -> list[str]:
    """A metric threshold rule names its metric, a comparator and a finite threshold."""
    problems: list[str] = []
    if not metric.strip():
        problems.append("a metric threshold rule needs the metric name")
    if comparator is None:
        problems.append("a metric threshold rule needs a comparator (lt, le, gt or ge)")
    if threshold is None:
        problems.append("a metric threshold rule needs a threshold")
    elif isinstance(threshold, bool) or not math.isfinite(threshold):
        # A NaN threshold would silently never fire; an infinite one is almost always a typo.
        problems.append(f"the threshold must be a finite number, not {threshold!r}")
    return problems


def _idle_gpu_problems(metric: str, comparator: str | None, threshold: float | None) -> list[str]:
    """An idle-GPU rule's threshold is a utilization percentage in (0, 100]."""
    if threshold is None or isinstance(threshold, bool) or not 0 < threshold <= 100:
        return [f"an idle-GPU rule's threshold is a percentage in (0, 100], not {threshold!r}"]
    return []


def _budget_problems(metric: str, comparator: str | None, threshold: float | None) -> list[str]:
    """A budget rule's threshold, when given, is a finite fraction of the budget above 0."""
    if threshold is None:
        return []
    if isinstance(threshold, bool) or not math.isfinite(threshold) or threshold <= 0:
        return [f"a budget rule's threshold is a fraction of the budget above 0, not {threshold!r}"]
    return []


# The kinds whose definition needs more than the kind: each one's own check.
_KIND_PROBLEMS: Final[dict[str, Callable[[str, str | None, float | None], list[str]]]] = {
    "metric_threshold": _metric_threshold_problems,
    "idle_gpu": _idle_gpu_problems,
    "budget_overrun": _budget_problems,
}


def rule_problems(
    kind: str, metric: str, comparator: str | None, threshold: float | None
) -> tuple[str, ...]:
    """Why a rule definition is unusable, in words; empty when it is fine.

    Exposed so an API layer can answer 400 with these words before building a StopRuleSpec.
    """
    problems: list[str] = []
    if kind not in RULE_KINDS:
        problems.append(f"unknown rule kind {kind!r}; expected one of {', '.join(RULE_KINDS)}")
    if comparator is not None and comparator not in COMPARATORS:
        problems.append(
            f"unknown comparator {comparator!r}; expected one of {', '.join(COMPARATORS)}"
        )
    check = _KIND_PROBLEMS.get(kind)
    if check is not None:
        problems += check(metric, comparator, threshold)
    return tuple(problems)


@dataclass(frozen=True)
class StopRuleSpec:
    """A stop rule as registered before the runs.

    ``metric`` may be left empty for ``non_finite_loss`` (means ``"loss"``) and
    ``input_truncated`` (means ``"input_truncated"`` or ``"truncated_inputs"``).
    Raises ValueError (with the words of ``rule_problems``) for an unusable definition.
    """

    id: int
    kind: RuleKind
    metric: str = ""
    comparator: Comparator | None = None
    threshold: float | None = None
    description: str = ""
    grace: Grace = NO_GRACE

    def __post_init__(self) -> None:
        problems = rule_problems(self.kind, self.metric, self.comparator, self.threshold)
        problems += grace_problems(self.grace.steps, self.grace.minutes)
        if problems:
            raise ValueError(f"stop rule #{self.id}: " + "; ".join(problems))

    @property
    def metric_names(self) -> frozenset[str]:
        """The metric point names this rule watches (empty for kinds that watch no metric)."""
        if self.kind == "non_finite_loss":
            return frozenset({self.metric or DEFAULT_LOSS_METRIC})
        if self.kind == "metric_threshold":
            return frozenset({self.metric})
        if self.kind == "input_truncated":
            if not self.metric or self.metric in TRUNCATION_METRICS:
                return TRUNCATION_METRICS
            return frozenset({self.metric})
        return frozenset()

    @property
    def label(self) -> str:
        """``rule #3: non-finite loss``, with the description appended when there is one."""
        text = f"rule #{self.id}: {RULE_KIND_LABELS[self.kind]}"
        if self.description.strip():
            text += f"; {self.description.strip()}"
        return text


@dataclass(frozen=True)
class Firing:
    """A rule that fired: the run keeps ``rule_id`` and ``reason`` (docs/domain.md §4)."""

    rule_id: int
    kind: RuleKind
    reason: str
    step: int | None
    grace: Grace = NO_GRACE

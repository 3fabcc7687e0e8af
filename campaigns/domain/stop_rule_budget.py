"""The budget_overrun rule's evaluation (docs/domain.md §4, §18), pure; re-exported by
campaigns/domain/stop_rules.py. Money is ``Decimal`` in the campaign's currency (never float);
hours are wall hours."""

from __future__ import annotations

from collections.abc import Iterable
from decimal import ROUND_HALF_UP, Decimal

from campaigns.domain.formatting import format_money
from campaigns.domain.stop_rule_spec import Firing, StopRuleSpec


def _as_decimal(value: float | Decimal, what: str) -> Decimal:
    if isinstance(value, bool):
        raise ValueError(f"{what} must be a number, not {value!r}")
    # repr() keeps 48.1 as 48.1 rather than its binary expansion, so messages read naturally.
    number = value if isinstance(value, Decimal) else Decimal(repr(float(value)))
    if not number.is_finite():
        raise ValueError(f"{what} must be finite, not {value!r}")
    return number


def _plain(number: Decimal) -> str:
    text = format(number.normalize(), "f")
    return "0" if text in ("-0", "0") else text


def evaluate_budget(
    rules: Iterable[StopRuleSpec],
    observed_hours: float | Decimal | None,
    reserved_hours: float | Decimal | None,
    spent: Decimal | None,
    budget: Decimal | None,
) -> Firing | None:
    """Fire the first ``budget_overrun`` rule when hours or money go strictly beyond the plan.

    Hours: observed wall hours against reserved hours. Money: spent against the budget, both in
    the campaign's currency. A missing figure (None) is not checked: there is nothing to overrun.
    """
    rule = next((r for r in rules if r.kind == "budget_overrun"), None)
    if rule is None:
        return None
    problems: list[str] = []
    if observed_hours is not None and reserved_hours is not None:
        observed = _as_decimal(observed_hours, "observed_hours")
        reserved = _as_decimal(reserved_hours, "reserved_hours")
        if observed > reserved:
            problems.append(
                f"observed {_plain(observed)} h exceed the {_plain(reserved)} h reserved "
                f"by {_plain(observed - reserved)} h"
            )
    if spent is not None and budget is not None:
        spent_d = _as_decimal(spent, "spent")
        budget_d = _as_decimal(budget, "budget")
        if spent_d > budget_d:
            problems.append(
                f"spent {format_money(spent_d)} exceeds the budget {format_money(budget_d)} "
                f"by {format_money(spent_d - budget_d)}"
            )
    if not problems:
        return None
    return Firing(
        rule_id=rule.id,
        kind=rule.kind,
        reason=f"{'; '.join(problems)} ({rule.label})",
        step=None,
        grace=rule.grace,
    )


def evaluate_spend(
    rules: Iterable[StopRuleSpec], spent: Decimal, budget: Decimal | None, currency: str = ""
) -> Firing | None:
    """Fire the first ``budget_overrun`` rule when ``spent`` is strictly beyond its fraction of
    the budget (``threshold``, default 1.0); no budget, nothing to overrun.

    The reason names the budget and the figures, e.g. ``"budget: spent 120.00 USD is beyond
    100% of the budget 100.00 USD by 20.00 USD (rule #4: budget or time overrun)"``.
    """
    rule = next((r for r in rules if r.kind == "budget_overrun"), None)
    if rule is None or budget is None:
        return None
    spent_d = _as_decimal(spent, "spent")
    budget_d = _as_decimal(budget, "budget")
    fraction = Decimal(1) if rule.threshold is None else _as_decimal(rule.threshold, "threshold")
    limit = budget_d * fraction
    if not spent_d > limit:
        return None
    unit = f" {currency}" if currency else ""
    share = _plain((fraction * 100).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))
    return Firing(
        rule_id=rule.id,
        kind=rule.kind,
        reason=(
            f"budget: spent {format_money(spent_d)}{unit} is beyond {share}% of the budget "
            f"{format_money(budget_d)}{unit} by {format_money(spent_d - limit)}{unit} "
            f"({rule.label})"
        ),
        step=None,
        grace=rule.grace,
    )

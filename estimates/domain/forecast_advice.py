"""The forecast in words: what a pilot changed, the headline against the window, and which
lots the forecast needs (pure: no Django, no I/O; docs/domain.md §7, §9, §10).

Units: hours are floats (wall hours), shown with the project's one hours formatter; money is
Decimal in the campaign's currency, written as a string with two decimals. Lots are compared in
the campaign's currency only: no exchange rate is ever invented.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from campaigns.domain.formatting import format_hours as fmt_hours
from campaigns.domain.timeline import Timeline
from estimates.domain import formulas, lot_selection
from estimates.domain.forecast_inputs import ItemInput, LotInput, PilotInput, h


def number(value: Any) -> float | None:
    """A finite positive number from a free-form config value, else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    result = float(value)
    return result if math.isfinite(result) and result > 0 else None


def count(value: Any) -> int | None:
    result = number(value)
    return int(result) if result is not None and result == int(result) else None


def _rate(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def _plural(n: int) -> str:
    return f"{n} GPU{'s' if n != 1 else ''}"


def money(amount: Decimal) -> str:
    # Guarded: a quantize needing more than 28 digits raises InvalidOperation.
    if not amount.is_finite() or amount.adjusted() >= 24:
        return str(amount)
    return str(amount.quantize(Decimal("0.01")))


# --------------------------------------------------------------------------- the pilot


def _stated_work(
    cfg: Mapping[str, Any], tps: float | None, sps: float | None
) -> tuple[float, float, str] | None:
    """(amount of work, measured rate, unit) when the config states the work."""
    epochs = number(cfg.get("epochs")) or 1.0
    tokens, samples = number(cfg.get("tokens")), number(cfg.get("samples"))
    per_sample = number(cfg.get("tokens_per_sample"))
    if tps and tokens:
        return tokens * epochs, tps, "tokens"
    if tps and samples and per_sample:
        return samples * per_sample * epochs, tps, "tokens"
    if sps and samples:
        return samples * epochs, sps, "samples"
    return None


def _stated_assumption(
    cfg: Mapping[str, Any], tps: float | None, sps: float | None
) -> tuple[float, float, str] | None:
    """(assumed rate, measured rate, unit) when the config states the assumed throughput."""
    if tps and number(cfg.get("assumed_tokens_per_second")):
        return number(cfg.get("assumed_tokens_per_second")) or 0.0, tps, "tokens"
    if sps and number(cfg.get("assumed_samples_per_second")):
        return number(cfg.get("assumed_samples_per_second")) or 0.0, sps, "samples"
    return None


def pilot_hours(item: ItemInput, sample: PilotInput) -> tuple[float | None, str]:
    """Hours for the item's work from its pilot measurement, and what was done, in words.

    1. The config states the work (`tokens`, or `samples` [+ `tokens_per_sample`], x `epochs`):
       hours = work / measured throughput, scaled linearly from the pilot's GPUs to the item's
       (`gpus` in the config, default the pilot's).
    2. Else the config states the throughput the plan assumed (`assumed_tokens_per_second` or
       `assumed_samples_per_second`): planned hours x assumed / measured.
    3. Else the planned hours are kept, and the note says what to add.
    """
    cfg = item.config
    planned = float(item.planned_hours)
    pilot_gpus = max(1, int(sample.gpus or 1))
    gpus = count(cfg.get("gpus")) or pilot_gpus
    tps, sps = number(sample.tokens_per_second), number(sample.samples_per_second)
    on = _plural(pilot_gpus)

    work = _stated_work(cfg, tps, sps)
    if work is not None:
        amount, rate, unit = work
        hours = formulas.pilot_wall_hours(amount, rate, pilot_gpus, gpus)
        return hours, (
            f"the pilot measured {_rate(rate)} {unit}/s on {on}: {fmt_hours(hours)} h for "
            f"{amount:,.0f} {unit} on {_plural(gpus)}, instead of the "
            f"{fmt_hours(planned)} h planned"
        )
    assumed = _stated_assumption(cfg, tps, sps)
    if assumed is not None:
        expected, rate, unit = assumed
        # The assumed figure is for the item's own GPUs; bring the measurement there first.
        measured = rate * gpus / pilot_gpus
        hours = planned * expected / measured
        return hours, (
            f"the pilot measured {_rate(rate)} {unit}/s on {on} against "
            f"{_rate(expected)} assumed: {fmt_hours(planned)} h planned become {fmt_hours(hours)} h"
        )
    measured_text = f"{_rate(tps)} tokens/s" if tps else f"{_rate(sps or 0.0)} samples/s"
    return None, (
        f"the pilot measured {measured_text} on {on}, but the config states neither the work "
        "(tokens, or samples and epochs) nor an assumed throughput: the planned "
        f"{fmt_hours(planned)} h are kept"
    )


# --------------------------------------------------------------------------- the window


def headline(line: Timeline, lots: Mapping[str, Any]) -> str:
    """The campaign's headline (docs/domain.md §7.7): the current calendar against the window,
    the committed one beside it when they differ, and when the calendar outgrows the window or
    the lots, what the lot advice buys or cuts (not once the campaign is closed: what ran cannot
    be bought for any more). The campaign page, the API, the commit page and
    the report all show this sentence."""
    hours, window = line.hours, line.window_hours
    text = f"The calendar takes {fmt_hours(hours)} h of a {fmt_hours(window)} h window: "
    if line.fits:
        text += f"{fmt_hours(window - hours)} h to spare"
    else:
        text += f"{fmt_hours(hours - window)} h over"
    if abs(hours - line.planned_hours) >= 0.005:
        text += f" (planned {fmt_hours(line.planned_hours)} h)"
    short = not line.closed and (not line.fits or (line.hours_to_buy or 0.0) >= 0.005)
    remedy = _remedy(lots) if short else ""
    return f"{text}; {remedy}." if remedy else f"{text}."


def _remedy(lots: Mapping[str, Any]) -> str:
    """The lot advice in a clause: the lots that cover the calendar, or the cut that keeps the
    reserved ones."""
    advised = lots.get("advised") or []
    parts = []
    if advised and lots.get("feasible") is not False:
        names = ", ".join(str(lot["plan"]) for lot in advised)
        word = "lot covers" if len(advised) == 1 else "lots cover"
        parts.append(
            f"the {names} {word} it at {lots.get('advised_total')} {lots.get('currency', '')}"
        )
    currency = lots.get("currency", "")
    for cut in (lots.get("cut_options") or [])[:1]:
        names = ", ".join(cut["items"])
        parts.append(f"or cut {names} and keep the {cut['plan']} at {cut['price']} {currency}")
    return " ".join(parts).strip()


def figures_line(figures: Mapping[str, float]) -> str:
    """What the lots must hold, in the plan figures' words: the machine time is the calendar's
    machine stages, the items' and those tied to no item; the calendar length adds the human
    time and the waits."""
    machine, untied = figures["machine_hours"], figures["untied_machine_hours"]
    text = (
        f"Forecast figures: work hours {fmt_hours(figures['work_hours'])} h, GPU-hours "
        f"{fmt_hours(figures['gpu_hours'])}, calendar length "
        f"{fmt_hours(figures['calendar_hours'])} h; the lots must hold "
        f"{fmt_hours(machine)} h of machine time"
    )
    if untied > 0.005:
        text += (
            f" ({fmt_hours(machine - untied)} h on the items' stages, {fmt_hours(untied)} h on "
            "stages tied to no item)"
        )
    return text + "."


# --------------------------------------------------------------------------- lots


def _reserved_json(reserved_lots: Sequence[LotInput], currency: str) -> dict[str, Any]:
    reserved_total = sum(
        (lot.total_price for lot in reserved_lots if lot.currency == currency), Decimal(0)
    )
    return {
        "currency": currency,
        "reserved": [
            {
                "plan": f"{lot.provider} {lot.plan_name}",
                "quantity": lot.quantity,
                "price": money(lot.price),
                "currency": lot.currency,
                "total": money(lot.total_price),
            }
            for lot in reserved_lots
        ],
        "reserved_total": money(reserved_total) if reserved_lots else None,
        "advised": [],
        "advised_total": None,
        "feasible": None,
        "method": None,
        "explanation": [],
    }


def _selection_json(
    selection: lot_selection.Selection, labels: Mapping[str, str]
) -> dict[str, Any]:
    return {
        "advised": [
            {
                "plan": f"{lot.plan.provider} {lot.plan.name}",
                "gpu": lot.plan.gpu,
                "duration_hours": h(lot.plan.duration_hours),
                "price": money(lot.plan.price),
                "currency": lot.plan.currency,
                "hours": h(lot.hours),
                "items": [labels[k] for k in lot.item_keys],
            }
            for lot in selection.lots
        ],
        "advised_total": money(selection.total),
        "feasible": selection.feasible,
        "method": selection.method,
        "cut_options": [
            {
                "items": [labels[k] for k in cut.item_keys],
                "hours_cut": h(cut.hours_cut),
                "plan": f"{cut.plan.provider} {cut.plan.name}",
                "price": money(cut.plan.price),
            }
            for cut in selection.cut_options
        ],
    }


def _cost_lines(
    selection: lot_selection.Selection,
    reserved_lots: Sequence[LotInput],
    currency: str,
    budget: Decimal | None,
) -> list[str]:
    lines: list[str] = []
    advised_total = selection.total
    reserved_total = sum(
        (lot.total_price for lot in reserved_lots if lot.currency == currency), Decimal(0)
    )
    if reserved_lots and selection.lots:
        if advised_total > reserved_total:
            lines.append(
                f"The reserved lots cost {money(reserved_total)} {currency}; the forecast needs "
                f"{money(advised_total)} {currency} of lots, "
                f"{money(advised_total - reserved_total)} {currency} more."
            )
        else:
            lines.append(
                f"The reserved lots ({money(reserved_total)} {currency}) cover the forecast."
            )
    if budget is not None and selection.lots and advised_total > budget:
        lines.append(
            f"The advised lots ({money(advised_total)} {currency}) exceed the budget of "
            f"{money(budget)} {currency}."
        )
    return lines


def lot_advice(
    *,
    currency: str,
    budget: Decimal | None,
    reserved_lots: Sequence[LotInput],
    offers: Sequence[lot_selection.RentalPlanOffer],
    work: list[lot_selection.PlanItem],
    reserved_machine_hours: float | None,
    forecast_hours: float,
    window: float,
) -> tuple[dict[str, Any], list[str]]:
    """The reserved lots, the lots the forecast work needs (docs/domain.md §9), and why."""
    result = _reserved_json(reserved_lots, currency)
    if not work:
        return result, []
    if not offers:
        return result, [f"No rental plan is listed in {currency}: no lot advice."]
    if not math.isfinite(window) or window <= 0:
        # A campaign stored before the window had to be positive: no lot fits it.
        return result, [f"The window is {window:g} h: give the campaign one for lot advice."]
    fits = forecast_hours <= window + 1e-9
    lot_window = window
    if not fits:
        # The work no longer fits the window: look at what a longer lot would take (docs/domain.md
        # §7: "then look at the 7-day plan, or at a reduced protocol").
        lot_window = max(window, max(o.duration_hours for o in offers))
    reference = reserved_machine_hours
    if reference is not None and abs(reference - sum(i.machine_hours for i in work)) < 1e-9:
        reference = None  # "the calendar stays the same" says nothing
    selection = lot_selection.select_lots(work, lot_window, list(offers), reference_hours=reference)
    lines = list(selection.explanation)
    if not fits:
        lines.insert(
            0 if reference is None else 1,
            f"The forecast ({fmt_hours(forecast_hours)} h) exceeds the {fmt_hours(window)} h "
            "window: the lots below assume the window can stretch to a longer lot; otherwise "
            "cut work (a reduced protocol that still answers the question).",
        )
    result.update(_selection_json(selection, {i.key: i.label for i in work}), explanation=lines)
    return result, [*lines, *_cost_lines(selection, reserved_lots, currency, budget)]

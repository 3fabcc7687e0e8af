"""The interval an estimate gets, by what it rests on (docs/domain.md §24.12): its time by the
source and the node scope, its memory by how the base is stored; and "fits" from the high end.

Units: hours, bytes, money as the estimate's.
"""

from __future__ import annotations

import math

from catalog.domain.catalog import GpuModel
from estimates.domain.formulas.adapters import storage_precision
from estimates.domain.formulas.cost import Money, scaled_amount
from estimates.domain.formulas.intervals import DEFAULT_UTILIZATION, Interval, interval, time_kind
from estimates.domain.formulas.memory import MemoryBreakdown
from estimates.domain.formulas.specs import EstimateInput
from estimates.domain.formulas.wording import gib, money_text

QUANTIZED = frozenset({"int8", "int4", "nf4", "fp4"})


def memory_kind(inp: EstimateInput) -> str:
    """A quantized base keeps buffers the formulas do not count (§24.12): its own kind."""
    quantized = storage_precision(inp.model, inp.training) in QUANTIZED
    return "memory.quantized" if quantized and inp.training.method != "full" else "memory"


def memory_range(inp: EstimateInput, memory: MemoryBreakdown) -> Interval:
    return interval(float(memory.total), memory_kind(inp))


def fits_with_range(inp: EstimateInput, memory: MemoryBreakdown, device_bytes: int) -> bool:
    """ "Fits" only when the 80% range's high end fits the device (issue 31)."""
    return memory_range(inp, memory).high <= device_bytes


def time_range(inp: EstimateInput, gpu: GpuModel, hours: float, source: str) -> Interval:
    """The wall hours' range: a pilot on this GPU inside a node or across nodes, else the
    assumed utilization (centred on the default 40%; a utilization given is the caller's)."""
    profile = gpu.link_profile()
    per_node = inp.hardware.gpus_per_node or (profile.gpus_per_node if profile else 8)
    kind = time_kind(source, inp.hardware.count, per_node)
    default = abs(inp.hardware.utilization - DEFAULT_UTILIZATION) < 1e-9
    return interval(hours, kind, centred=source != "assumed" or default)


def range_notes(time: Interval, memory: Interval, hours: float, cost: Money | None) -> list[str]:
    """The time's, the cost's and the memory's 80% ranges in words (§24.12)."""
    words = [
        f"Time: {hours_text(hours)} h, likely {hours_text(time.low)}-{hours_text(time.high)} h "
        "(80%: where "
        f"{time.cases} published runs of this kind fell against their estimates, "
        f"{time.kind}); memory per device likely {gib(math.floor(memory.low))}-"
        f"{gib(math.ceil(memory.high))} ({memory.kind}, {memory.cases} runs)."
    ]
    if cost is not None:
        low, high = cost_range(cost, time, hours)
        words.append(
            f"Cost: {money_text(cost)}, likely {money_text(low)}-{money_text(high)} (the "
            "time's range at the same rate)."
        )
    return words


def hours_text(hours: float) -> str:
    """Hours as people read them: whole above 100, one decimal below, two under 1."""
    if hours >= 100:
        return f"{hours:,.0f}"
    return f"{hours:.1f}" if hours >= 1 else f"{hours:.2f}"


def cost_range(cost: Money, time: Interval, hours: float) -> tuple[Money, Money]:
    """The cost scaled by the time's range (rate x hours; extras stay as they are)."""
    if hours <= 0:
        return cost, cost
    low = scaled_amount(cost.amount, time.low / hours)
    high = scaled_amount(cost.amount, time.high / hours)
    return Money(low, cost.currency), Money(high, cost.currency)

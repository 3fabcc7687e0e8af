"""Input checks shared by every formula family, the documented input ranges, and money rounding.

Rule: an input the formulas reject raises ``EstimateInputError`` (a ValueError) whose ``field``
names it; ``LIMITS`` holds each API input's inclusive range (the OpenAPI schema states them as
minimum/maximum). Money is ``Decimal``, quantized once to cents (ROUND_HALF_UP) and refused
beyond ``MAX_AMOUNT`` (docs/domain.md §9).
Units: as the caller's (the checks only bound them).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from decimal import ROUND_HALF_UP, Decimal
from types import MappingProxyType
from typing import Final

_CENT: Final = Decimal("0.01")
# The largest money amount computed (a quadrillion): quantizing to cents then needs 18 digits,
# well inside Decimal's default 28-digit context, so a quantize can never raise.
MAX_AMOUNT: Final = Decimal("1e15")

# Documented input ranges, inclusive, by API name (docs/api.md; the OpenAPI schema states them as
# minimum/maximum). They are generous (the largest published models have ~2e12 parameters and
# ~2e13 tokens) and chosen so that no product in the formulas overflows a float: at most
# 6 x 1e15 x 1e18 x 1e4 = 6e37 FLOPs, and time divides by at least 1e6 FLOP/s x 1e-3.
LIMITS: Final[Mapping[str, tuple[float, float]]] = MappingProxyType(
    {
        "model.parameters": (1.0, 1e15),
        "model.layers": (1, 100_000),
        "model.hidden_size": (1, 1_000_000),
        "model.attention_heads": (1, 100_000),
        "model.vocab_size": (1, 100_000_000),
        "model.largest_layer_parameters": (1.0, 1e15),
        "model.intermediate_size": (1, 10_000_000),
        "model.key_value_heads": (1, 100_000),
        "model.active_parameters": (1.0, 1e15),
        "model.experts": (1, 100_000),
        "model.experts_per_token": (1, 100_000),
        "model.attention_width": (1, 10_000_000),
        "training.lora.module.in_features": (1, 10_000_000),
        "training.lora.module.out_features": (1, 10_000_000),
        "training.lora.module.count": (1, 1_000),
        "pilot.micro_batch_size": (1, 1_000_000),
        "training.lora.rank": (1, 100_000),
        "training.trainable_parameters": (1.0, 1e15),
        "training.flops_per_sample": (1.0, 1e18),
        "training.activation_bytes_per_sample": (1.0, 1e15),
        "training.gradient_accumulation_steps": (1, 1_000_000),
        "hardware.expert_parallel": (1, 65_536),
        "hardware.context_parallel": (1, 65_536),
        "pilot.sequence_length": (1, 16_777_216),
        "training.tokens": (1.0, 1e18),
        "training.samples": (1.0, 1e18),
        "training.tokens_per_sample": (1.0, 1e9),
        "training.epochs": (1e-6, 1e4),
        "training.sequence_length": (1, 16_777_216),
        "training.micro_batch_size": (1, 1_000_000),
        "hardware.count": (1, 1_000_000),
        "hardware.utilization": (0.001, 1.0),
        "hardware.tensor_parallel": (1, 65_536),
        "hardware.pipeline_parallel": (1, 65_536),
        "hardware.custom.memory_bytes": (1, 2**50),
        "hardware.custom.peak_flops": (1e6, 1e18),
        "hardware.custom.tdp_watts": (1.0, 100_000.0),
        "pilot.tokens_per_second": (1e-6, 1e15),
        "pilot.samples_per_second": (1e-6, 1e15),
        "pilot.gpus": (1, 1_000_000),
        "hardware.gpus_per_node": (1, 1024),
        "compute_optimal.flops": (1e15, 1e32),
        "compute_optimal.parameters": (1e6, 1e15),
        "compute_optimal.epochs": (1.0, 1e4),
        "budget.utilization": (0.001, 1.0),
        "window_hours": (0.01, 1e7),
        "serving.requests_per_month": (1.0, 1e15),
        "serving.tokens_per_request": (1.0, 1e7),
        "serving.tokens_per_second_per_gpu": (0.001, 1e9),
        "serving.months": (1, 600),
        "serving.gpus": (1, 1_000_000),
        "serving.input_tokens_per_request": (0.0, 1e7),
        "serving.input_tokens_per_second_per_gpu": (0.001, 1e9),
        "serving.context_length": (1, 16_777_216),
        "serving.batch_size": (1, 1_000_000),
        "local.power_watts": (1.0, 1e7),
        "local.lifetime_months": (1, 600),
        "energy.pue": (1.0, 10.0),
        "energy.grid_kg_co2_per_kwh": (0.0, 10.0),
        "energy.tdp_watts": (1.0, 100_000.0),
        "reliability.checkpoint_write_seconds": (0.001, 1e6),
        "reliability.mtbf_hours": (0.001, 1e7),
        "reliability.interruptions.count": (1, 1_000_000),
        "reliability.interruptions.days": (0.001, 1e5),
        "overheads.loading_hours": (0.0, 1e6),
        "overheads.long_input_hours": (0.0, 1e6),
        "overheads.validation_fraction": (0.0, 100.0),
        "overheads.output_hours": (0.0, 1e6),
        "overheads.checkpoint_hours": (0.0, 1e6),
    }
)


class EstimateInputError(ValueError):
    """An input the formulas reject; ``field`` names it (dotted API form inside ``estimate``)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


# --------------------------------------------------------------------------- validation helpers


def positive(value: float, name: str) -> float:
    if isinstance(value, bool) or not math.isfinite(value) or value <= 0:
        raise EstimateInputError(name, f"must be a finite number > 0, got {value!r}")
    return float(value)


def non_negative(value: float, name: str) -> float:
    if isinstance(value, bool) or not math.isfinite(value) or value < 0:
        raise EstimateInputError(name, f"must be a finite number >= 0, got {value!r}")
    return float(value)


def positive_int(value: int, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise EstimateInputError(name, f"must be an integer >= 1, got {value!r}")
    return value


def check_utilization(value: float, name: str = "utilization") -> float:
    if isinstance(value, bool) or not math.isfinite(value) or not 0 < value <= 1:
        raise EstimateInputError(name, f"must be in (0, 1], got {value!r}")
    return float(value)


def non_negative_money(value: Decimal, name: str) -> Decimal:
    if not isinstance(value, Decimal) or not value.is_finite() or value < 0:
        raise EstimateInputError(name, f"must be a finite Decimal >= 0, got {value!r}")
    return value


def as_decimal(value: float | int | Decimal, name: str) -> Decimal:
    if isinstance(value, Decimal):
        result = value
    elif isinstance(value, bool) or not math.isfinite(value):
        raise EstimateInputError(name, f"must be a finite number, got {value!r}")
    else:
        # str() gives the shortest repr that round-trips, i.e. the number the caller meant.
        result = Decimal(str(value))
    if not result.is_finite() or result < 0:
        raise EstimateInputError(name, f"must be a finite number >= 0, got {value!r}")
    return result


class AmountOverflowError(EstimateInputError):
    """A money amount beyond ``MAX_AMOUNT``; callers rename ``field`` to the input behind it."""


def cents(amount: Decimal, name: str = "amount") -> Decimal:
    """``amount`` quantized to cents (ROUND_HALF_UP), refused beyond ``MAX_AMOUNT``.

    Checked before quantizing: a quantize whose result needs more digits than the context's
    precision raises ``decimal.InvalidOperation`` instead of rounding.
    """
    if not amount.is_finite() or abs(amount) > MAX_AMOUNT:
        raise AmountOverflowError(
            name, f"the amount {amount:.3e} exceeds the largest amount handled, {MAX_AMOUNT:.0e}"
        )
    return amount.quantize(_CENT, rounding=ROUND_HALF_UP)


def in_range(value: float, dotted: str) -> float:
    """``value`` within ``LIMITS[dotted]``; the error names the last part (renamed by callers)."""
    low, high = LIMITS[dotted]
    name = dotted.rsplit(".", 1)[-1]
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise EstimateInputError(name, f"must be a finite number, got {value!r}")
    if not low <= value <= high:
        raise EstimateInputError(name, f"must be between {low:g} and {high:g}, got {value:g}")
    return value


def check_choice(value: str, choices: Sequence[str], name: str) -> str:
    if value not in choices:
        raise EstimateInputError(name, f"must be one of {', '.join(choices)}; got {value!r}")
    return value

"""Serving cost: monthly and cumulative, against training, and owning against renting.

Rule: "train once, serve many" (docs/domain.md §10): serving repeats every month while
training is paid once; GPU-hours from measured tokens/s (or 2P FLOPs per token); owned hardware
amortizes under a steady load.
Units: tokens, GPU-hours per month, ``Decimal`` money per month.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Final

from estimates.domain.formulas.checks import (
    AmountOverflowError,
    EstimateInputError,
    as_decimal,
    cents,
    check_choice,
    non_negative_money,
    positive,
    positive_int,
)
from estimates.domain.formulas.cost import hourly_cost
from estimates.domain.formulas.flops import inference_flops
from estimates.domain.formulas.time import gpu_hours

# ------------------------------------------------------------------------------------ serving


@dataclass(frozen=True)
class InferenceProjection:
    """Monthly serving GPU-hours and cost, cumulative costs, and when they pass training."""

    monthly_gpu_hours: float
    monthly_cost: Decimal
    cumulative_costs: tuple[Decimal, ...]
    month_exceeding_training: int | None


def inference_projection(
    parameters: float,
    tokens_per_month: float,
    peak_flops: float,
    utilization: float,
    rate_per_gpu_hour: Decimal,
    months: int,
    training_cost: Decimal = Decimal("0"),
) -> InferenceProjection:
    """Serving cost over months: tokens x 2P FLOPs / (peak x utilization) -> GPU-hours x rate.

    Source: Kaplan et al. (2020) for 2P FLOPs per generated or scored token; docs/domain.md
    §10 ("train once, serve many"). Each month is billed (and rounded to cents) on its
    own; ``month_exceeding_training`` is the first month (1-based, not capped by ``months``)
    whose cumulative cost is strictly above ``training_cost``, None if serving costs nothing.
    """
    flops = inference_flops(parameters, tokens_per_month)
    hours = gpu_hours(flops, peak_flops, utilization)
    monthly = hourly_cost(1, hours, rate_per_gpu_hour)
    n_months = positive_int(months, "months")
    cumulative = tuple(monthly * m for m in range(1, n_months + 1))
    training = non_negative_money(training_cost, "training_cost")
    exceeding = None if monthly == 0 else int(training // monthly) + 1
    return InferenceProjection(hours, monthly, cumulative, exceeding)


HOURS_PER_MONTH: Final = 730.0  # 8,760 h a year / 12


@dataclass(frozen=True)
class LocalServing:
    """Owning the serving hardware: monthly power cost, cumulative cost, break-even month."""

    monthly_cost: Decimal
    cumulative: tuple[Decimal, ...]
    break_even_month: int | None
    within_lifetime: bool


@dataclass(frozen=True)
class ServingProjection:
    tokens_per_month: float
    gpu_hours_per_month: float
    billed_hours_per_month: float
    load: float
    monthly_cost: Decimal
    cumulative: tuple[Decimal, ...]
    month_exceeding_training: int | None
    local: LocalServing | None


def _monthly_bills(
    billed: float, rate: Decimal, months: int
) -> tuple[Decimal, tuple[Decimal, ...]]:
    """Each month's bill to cents, and the cumulative bills month by month."""
    try:
        monthly = cents(as_decimal(billed, "hours") * rate, "hourly_rate_per_gpu")
        cumulative = tuple(cents(monthly * m, "months") for m in range(1, months + 1))
    except AmountOverflowError as error:
        raise AmountOverflowError("hourly_rate_per_gpu", error.message) from None
    return monthly, cumulative


def _month_exceeding(training_cost: Decimal | None, monthly: Decimal) -> int | None:
    """The first month (1-based) whose cumulative bill is strictly above the training cost."""
    if training_cost is None or monthly <= 0:
        return None
    paid = Fraction(non_negative_money(training_cost, "training_cost"))
    return math.floor(paid / Fraction(monthly)) + 1


def serving_projection(
    *,
    requests_per_month: float,
    tokens_per_request: float,
    tokens_per_second_per_gpu: float,
    months: int,
    hourly_rate_per_gpu: Decimal,
    billing: str = "busy",
    gpus: int = 1,
    training_cost: Decimal | None = None,
    purchase_price: Decimal | None = None,
    power_watts: float | None = None,
    electricity_per_kwh: Decimal | None = None,
    lifetime_months: int | None = None,
) -> ServingProjection:
    """Monthly and cumulative serving cost, when it passes training, and local vs cloud.

    Source: docs/domain.md §10 ("train once, serve many": serving repeats every
    month while training is paid once; owned hardware amortizes under a steady load). Busy
    GPU-hours = requests x tokens per request / measured tokens/s per GPU / 3600. ``busy``
    billing pays those hours; ``always_on`` pays ``gpus`` x 730 h a month whatever the load.
    Each month is billed to cents (ROUND_HALF_UP); cumulative costs are their sums.
    ``month_exceeding_training`` is the first month (1-based, not capped by ``months``) whose
    cumulative cost is strictly above the training cost. Owning costs the purchase price up
    front plus electricity for the same hours at ``power_watts``; ``break_even_month`` is the
    first month from which the cumulative cloud cost is at least the cumulative local cost
    (None if it never is), within its lifetime or not (``within_lifetime`` says).
    """
    tokens = positive(requests_per_month, "requests_per_month") * positive(
        tokens_per_request, "tokens_per_request"
    )
    busy = tokens / positive(tokens_per_second_per_gpu, "tokens_per_second_per_gpu") / 3600.0
    n_months = positive_int(months, "months")
    rate = non_negative_money(hourly_rate_per_gpu, "hourly_rate_per_gpu")
    check_choice(billing, ("busy", "always_on"), "billing")
    if billing == "always_on":
        billed = positive_int(gpus, "gpus") * HOURS_PER_MONTH
        load = busy / billed
    else:
        billed, load = busy, 1.0
    monthly, cumulative = _monthly_bills(billed, rate, n_months)
    exceeding = _month_exceeding(training_cost, monthly)
    local = None
    if purchase_price is not None:
        local = _owning(
            purchase_price,
            power_watts,
            electricity_per_kwh,
            lifetime_months,
            billed=billed,
            monthly=monthly,
            months=n_months,
        )
    return ServingProjection(tokens, busy, billed, load, monthly, cumulative, exceeding, local)


def _owning(
    purchase_price: Decimal,
    power_watts: float | None,
    electricity_per_kwh: Decimal | None,
    lifetime_months: int | None,
    *,
    billed: float,
    monthly: Decimal,
    months: int,
) -> LocalServing:
    """Owning the hardware: the price up front plus power for the same hours, the break-even
    month against renting (``serving_projection``)."""
    if power_watts is None or electricity_per_kwh is None or lifetime_months is None:
        raise EstimateInputError(
            "local", "give purchase_price, power_watts, electricity_per_kwh, lifetime_months"
        )
    price = non_negative_money(purchase_price, "purchase_price")
    kwh = as_decimal(billed * positive(power_watts, "power_watts") / 1000.0, "power_watts")
    power = cents(
        kwh * non_negative_money(electricity_per_kwh, "electricity_per_kwh"), "power_watts"
    )
    life = positive_int(lifetime_months, "lifetime_months")
    cumulative = tuple(cents(price + power * m, "purchase_price") for m in range(1, months + 1))
    saving = monthly - power
    even: int | None
    if price == 0:
        even = 1
    elif saving <= 0:
        even = None
    else:
        even = max(1, math.ceil(Fraction(price) / Fraction(saving)))
    return LocalServing(power, cumulative, even, even is not None and even <= life)


def break_even_months(
    hardware_price: Decimal,
    cloud_rate_per_hour: Decimal,
    hours_per_month: float,
    power_cost_per_hour: Decimal = Decimal("0"),
) -> int | None:
    """Whole months until owning costs less than renting; None if it never does.

    Owning costs the price up front plus power for each used hour; renting costs the cloud
    rate for the same hours. Months = ceil(price / (hours x (cloud rate - power))).
    Source: docs/domain.md §10 (owned hardware amortizes under steady load; the
    comparison is at the real load, in hours per month). Resale value and staff are ignored.
    """
    price = non_negative_money(hardware_price, "hardware_price")
    saving_per_hour = non_negative_money(
        cloud_rate_per_hour, "cloud_rate_per_hour"
    ) - non_negative_money(power_cost_per_hour, "power_cost_per_hour")
    monthly_saving = as_decimal(hours_per_month, "hours_per_month") * saving_per_hour
    if price == 0:
        return 0
    if monthly_saving <= 0:
        return None
    # Exact rational division: Decimal's divmod raises once the quotient needs > 28 digits.
    return math.ceil(Fraction(price) / Fraction(monthly_saving))


# Under this share of device memory the weights and the KV cache must stay: the rest is the
# activations of the forward pass, the CUDA context and fragmentation (docs/domain.md §24.8).
SERVING_MEMORY_FRACTION: Final = 0.9
_KV_BYTES: Final = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1}


def kv_cache_bytes(
    layers: int,
    key_value_heads: int,
    head_size: float,
    context_length: int,
    batch_size: int,
    precision: str = "bf16",
) -> int:
    """KV-cache bytes: 2 (K and V) x layers x KV heads x head size x bytes, per token of context,
    times the context and the concurrent sequences.

    Source: Kwon et al. (2023), "Efficient Memory Management for Large Language Model Serving
    with PagedAttention", section 3: OPT-13B keeps 2 x 40 x 5120 x 2 bytes = 800 KB per token.
    """
    check_choice(precision, tuple(_KV_BYTES), "kv_precision")
    per_token = (
        2.0
        * positive_int(layers, "layers")
        * positive_int(key_value_heads, "key_value_heads")
        * positive(head_size, "head_size")
        * _KV_BYTES[precision]
    )
    return math.ceil(
        per_token
        * positive_int(context_length, "context_length")
        * positive_int(batch_size, "batch_size")
    )


def gpus_per_replica(
    weight_bytes: int,
    cache_bytes: int,
    device_bytes: int,
    attention_heads: int | None = None,
    key_value_heads: int | None = None,
) -> int:
    """GPUs one serving replica needs: weights plus KV cache within 90% of each GPU's memory,
    in a tensor split the model's heads allow (docs/domain.md §24.8)."""
    usable = positive_int(device_bytes, "device_bytes") * SERVING_MEMORY_FRACTION
    needed = max(1, math.ceil((weight_bytes + cache_bytes) / usable))
    if attention_heads is None:
        return needed
    return tensor_split(needed, attention_heads, key_value_heads) or needed


def tensor_split(
    needed: int, attention_heads: int, key_value_heads: int | None = None
) -> int | None:
    """The smallest tensor-parallel size of at least ``needed`` that vLLM and Megatron accept:
    it divides the attention heads, and the key/value heads divide by it or it by them (they are
    then replicated). None when no size up to the heads' count does: pipeline stages must
    take the rest."""
    heads = positive_int(attention_heads, "attention_heads")
    kv = key_value_heads or heads
    for size in range(max(1, needed), heads + 1):
        if heads % size == 0 and (kv % size == 0 or size % kv == 0):
            return size
    return None


def cost_per_million_tokens(
    rate_per_gpu_hour: Decimal, tokens_per_second_per_gpu: float
) -> Decimal:
    """Price of a million tokens at a GPU's measured throughput: rate / (tokens/s x 3600) x 1e6,
    to cents (docs/domain.md §24.8). Output (decode) and input (prefill) tokens run at very
    different rates: price each with its own throughput."""
    hours = 1e6 / positive(tokens_per_second_per_gpu, "tokens_per_second_per_gpu") / 3600.0
    return cents(as_decimal(hours, "hours") * non_negative_money(rate_per_gpu_hour, "rate"), "rate")

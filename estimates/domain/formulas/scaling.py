"""Scaling laws: compute-optimal splits (Chinchilla's or Llama 3's fit) and Kaplan's levers.

Rule: Hoffmann et al. (2022) or Dubey et al. (2024, Llama 3) for the compute-optimal
parameters and tokens (``scaling_law``, docs/domain.md §24.13); Kaplan et al.
(2020) L ~ N^-0.076 and D^-0.095 for what halving the model or the data costs in loss
(docs/domain.md §10). Projections from fitted power laws, not measurements.
Units: FLOPs, parameter and token counts; loss ratios are dimensionless.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from typing import Final

from estimates.domain.formulas.checks import EstimateInputError, positive
from estimates.domain.formulas.wording import count_text

KAPLAN_ALPHA_PARAMETERS: Final = 0.076
KAPLAN_ALPHA_DATA: Final = 0.095
CHINCHILLA_TOKENS_PER_PARAMETER: Final = 20.0


# ------------------------------------------------------------------------------- scaling laws


@dataclass(frozen=True)
class ComputeOptimal:
    """A compute-optimal split: parameters and training tokens."""

    parameters: float
    tokens: float


def chinchilla_optimal(
    compute_flops: float, tokens_per_parameter: float = CHINCHILLA_TOKENS_PER_PARAMETER
) -> ComputeOptimal:
    """N_opt = sqrt(C / (6 k)), D_opt = k N_opt, from C = 6 N D and D ~= k N (k = 20).

    Source: Hoffmann et al. (2022), "Training Compute-Optimal Large Language Models"
    (Chinchilla): parameters and tokens scale equally with compute, about 20 tokens per
    parameter (Chinchilla: 70B parameters, 1.4T tokens).
    """
    c = positive(compute_flops, "compute_flops")
    k = positive(tokens_per_parameter, "tokens_per_parameter")
    n = math.sqrt(c / (6.0 * k))
    return ComputeOptimal(n, k * n)


# Least-squares fit of N_opt = G C^a to Hoffmann et al. (2022), table 3 (log space, every row
# but the 67B one, whose printed 1.5T tokens disagree with its 5.76e23 FLOPs under C = 6ND:
# 5.76e23 / (6 x 67e9) = 1.43T). The paper's approach 1 gives a = 0.50.
CHINCHILLA_FIT_COEFFICIENT: Final = 0.0993487
CHINCHILLA_FIT_EXPONENT: Final = 0.498092


def chinchilla_fit(
    *, flops: float | None = None, parameters: float | None = None
) -> ComputeOptimal:
    """Compute-optimal parameters and tokens from FLOPs, or FLOPs and tokens from parameters.

    Source: Hoffmann et al. (2022), "Training Compute-Optimal Large Language Models", table 3
    (approach 1): N_opt = G C^a with G = 0.0993487 and a = 0.498092 fitted to the table, and
    D_opt = C / (6 N_opt). Reproduces every row within 1% except the 67B row's tokens (see
    CHINCHILLA_FIT_COEFFICIENT); the tokens per parameter drift from 20.0 (400M) to 21.6 (10T)
    as in the table, where ``chinchilla_optimal`` keeps a fixed 20.
    """
    if (flops is None) == (parameters is None):
        raise EstimateInputError("flops", "give exactly one of flops or parameters")
    if flops is not None:
        c = positive(flops, "flops")
        n = CHINCHILLA_FIT_COEFFICIENT * c**CHINCHILLA_FIT_EXPONENT
    else:
        n = positive(parameters or 0.0, "parameters")
        c = (n / CHINCHILLA_FIT_COEFFICIENT) ** (1.0 / CHINCHILLA_FIT_EXPONENT)
    return ComputeOptimal(n, c / (6.0 * n))


# Dubey et al. (2024), "The Llama 3 Herd of Models", section 3.2.1: the optimal number of
# training tokens N*(C) = A C^alpha with alpha = 0.53, extrapolated to 3.8e25 FLOPs: 402B
# parameters on 16.55T tokens. The printed A = 0.29 gives 10.5T tokens there, not 16.55T, and
# 6 x 402B x 16.55T is 4.0e25, not 3.8e25: the fit is anchored on the paper's stated tokens
# (16.55T at 3.8e25), the parameters following from C = 6ND (383B, 5% under the 402B printed).
LLAMA3_EXPONENT: Final = 0.53
LLAMA3_ANCHOR_FLOPS: Final = 3.8e25
LLAMA3_ANCHOR_TOKENS: Final = 16.55e12
SCALING_LAWS: Final = ("chinchilla", "llama3")
SCALING_LAW_SOURCES: Final = {
    "chinchilla": "Hoffmann et al. (2022), Chinchilla, table 3 (N_opt = 0.0993 C^0.498, fitted)",
    "llama3": (
        "Dubey et al. (2024), Llama 3, section 3.2.1: tokens ~ C^0.53, anchored on 16.55T tokens "
        "at 3.8e25 FLOPs (402B parameters printed; 6ND gives 383B)"
    ),
}


def llama3_fit(*, flops: float | None = None, parameters: float | None = None) -> ComputeOptimal:
    """Compute-optimal parameters and tokens by Llama 3's law, from FLOPs or parameters:
    D = D0 (C / C0)^0.53, N = C / (6 D) (see LLAMA3_EXPONENT)."""
    if (flops is None) == (parameters is None):
        raise EstimateInputError("flops", "give exactly one of flops or parameters")
    a = LLAMA3_EXPONENT
    if flops is not None:
        c = positive(flops, "flops")
    else:
        n = positive(parameters or 0.0, "parameters")
        # N = C / (6 D0 (C / C0)^a)  =>  C^(1 - a) = 6 N D0 / C0^a.
        c = (6.0 * n * LLAMA3_ANCHOR_TOKENS / LLAMA3_ANCHOR_FLOPS**a) ** (1.0 / (1.0 - a))
    tokens = LLAMA3_ANCHOR_TOKENS * (c / LLAMA3_ANCHOR_FLOPS) ** a
    return ComputeOptimal(c / (6.0 * tokens), tokens)


def compute_optimal(
    law: str, *, flops: float | None = None, parameters: float | None = None
) -> ComputeOptimal:
    """The compute-optimal split by ``law`` (``scaling_law``: chinchilla or llama3)."""
    if law == "llama3":
        return llama3_fit(flops=flops, parameters=parameters)
    if law != "chinchilla":
        raise EstimateInputError("scaling_law", f"must be one of {', '.join(SCALING_LAWS)}")
    return chinchilla_fit(flops=flops, parameters=parameters)


def _precision_lever(
    flops: float, precision_speedup: float, lower_precision: str, basis: str
) -> ScalingLever:
    speedup = positive(precision_speedup, "precision_speedup")
    return ScalingLever(
        "lower_precision",
        f"{lower_precision} ({basis or 'assuming throughput follows peak FLOP/s'}, x{speedup:.3g})",
        flops,
        1.0 / speedup,
        None,
        "Kaplan's law projects nothing for precision; check the loss curve on a pilot.",
    )


def kaplan_loss_ratio(factor: float, alpha: float) -> float:
    """Loss ratio after scaling parameters or data by ``factor``: factor ** -alpha.

    Source: Kaplan et al. (2020), eqs. (1.1)-(1.2): L(N) ~ N^-0.076, L(D) ~ D^-0.095 (use
    KAPLAN_ALPHA_PARAMETERS / KAPLAN_ALPHA_DATA). Halving the model: 0.5 ** -0.076 ~= 1.054,
    i.e. about 5.4% higher loss, when the other factor is not the bottleneck.
    """
    ratio: float = math.pow(positive(factor, "factor"), -positive(alpha, "alpha"))
    return ratio


@dataclass(frozen=True)
class ScalingLever:
    """One Kaplan lever on a training run: its FLOPs and cost relative to the run, and the
    projected loss ratio (None where Kaplan's law says nothing)."""

    name: str
    description: str
    flops: float
    cost_ratio: float
    loss_ratio: float | None
    projection: str


def _epochs_lever(flops: float, epochs: float) -> ScalingLever:
    return ScalingLever(
        "half_epochs",
        f"{epochs / 2:g} epochs instead of {epochs:g} (the same unique data, seen half as often)",
        flops / 2,
        0.5,
        None,
        "Kaplan's law counts distinct tokens: no loss projection for fewer repeats; "
        "let the validation metric judge.",
    )


def scaling_levers(
    parameters: float,
    tokens: float,
    *,
    epochs: float = 1.0,
    precision_speedup: float | None = None,
    lower_precision: str | None = None,
    speedup_basis: str = "assuming throughput follows peak FLOP/s",
) -> tuple[ScalingLever, ...]:
    """What halving the model, the data, the epochs or the precision does to cost and loss.

    Source: Kaplan et al. (2020), eqs. (1.1)-(1.2), as docs/domain.md §10 quotes them: loss ~
    N^-0.076 and D^-0.095, each when the other is not the bottleneck; cost follows FLOPs (6 N D)
    at a fixed utilization and hourly rate. A lower precision changes no FLOP count: its cost ratio
    is 1 / ``precision_speedup`` (measured where there is a figure, docs/domain.md §24.7, said in
    ``speedup_basis``), and Kaplan projects no loss for it. These are
    projections from a power law fitted on other models, not measurements.
    """
    n = positive(parameters, "parameters")
    d = positive(tokens, "tokens")
    e = positive(epochs, "epochs")
    flops = 6.0 * n * d
    model_loss = kaplan_loss_ratio(0.5, KAPLAN_ALPHA_PARAMETERS)
    data_loss = kaplan_loss_ratio(0.5, KAPLAN_ALPHA_DATA)

    def percent(ratio: float) -> str:
        return f"{100 * (ratio - 1):.1f}%"

    levers = [
        ScalingLever(
            "half_model",
            f"half the model ({count_text(n / 2)} parameters) on the same tokens",
            flops / 2,
            0.5,
            model_loss,
            f"Kaplan's L ~ N^-0.076 projects a loss about {percent(model_loss)} higher.",
        ),
        ScalingLever(
            "half_data",
            f"half the data ({count_text(d / 2)} tokens) for the same model",
            flops / 2,
            0.5,
            data_loss,
            f"Kaplan's L ~ D^-0.095 projects a loss about {percent(data_loss)} higher.",
        ),
    ]
    if e >= 2:
        levers.append(_epochs_lever(flops, e))
    if precision_speedup is not None and lower_precision is not None:
        levers.append(_precision_lever(flops, precision_speedup, lower_precision, speedup_basis))
    return tuple(levers)


def budget_flops(
    amount: Decimal, hourly_rate_per_gpu: Decimal, peak_flops: float, utilization: float
) -> tuple[float, float]:
    """(GPU-hours, FLOPs) a money budget buys: ``amount / hourly_rate_per_gpu`` GPU-hours at
    ``utilization`` of the GPU's peak FLOP/s; beyond 1e32 FLOPs is refused (``budget.amount``)."""
    gpu_hours = float(amount / hourly_rate_per_gpu)
    flops = gpu_hours * 3600.0 * peak_flops * utilization
    if flops > 1e32:
        raise EstimateInputError(
            "budget.amount", f"buys {flops:.3g} FLOPs, beyond the 1e32 handled"
        )
    return gpu_hours, flops

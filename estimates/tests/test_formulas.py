"""Published figures reproduced, and properties, for estimates.domain.formulas (no database)."""

from __future__ import annotations

import math
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from catalog.domain.catalog import GIB, get_gpu
from estimates.domain.formulas import (
    KAPLAN_ALPHA_DATA,
    KAPLAN_ALPHA_PARAMETERS,
    EstimateInputError,
    MemoryBreakdown,
    Overheads,
    activation_bytes,
    break_even_months,
    chinchilla_optimal,
    daly_interval,
    data_parallel_degree,
    deepspeed_model_states_bytes,
    fits_in_memory,
    gpu_hours,
    hourly_cost,
    inference_flops,
    inference_projection,
    kaplan_loss_ratio,
    lot_cost,
    memory_per_device,
    model_state_bytes_per_parameter,
    narayanan_flops_per_iteration,
    narayanan_training_flops,
    time_from_flops,
    time_from_pilot,
    training_flops,
    wall_hours,
    young_interval,
)

A100_BF16 = 312e12

# ------------------------------------------------------------------------------ published FLOPs


def test_it_reproduces_gpt3_175b_training_compute_of_3_14e23_flops() -> None:
    # Brown et al. (2020), table D.1: 174.6B parameters, 300B tokens, 3.14e23 FLOPs.
    assert training_flops(174.6e9, 300e9) == pytest.approx(3.14e23, rel=0.01)


def test_it_counts_inference_as_two_flops_per_parameter_per_token() -> None:
    assert inference_flops(7e9) == 1.4e10
    assert inference_flops(7e9, 1000) == 1.4e13


def test_it_agrees_with_narayanan_within_five_percent_of_6pt_for_gpt3() -> None:
    # GPT-3 175B: 96 layers, h = 12288, s = 2048, V = 51200 (Brown et al. 2020, table 2.1).
    narayanan = narayanan_training_flops(300e9, 2048, 96, 12288, 51200, recompute=False)
    six_pt = training_flops(174.6e9, 300e9)
    assert narayanan == pytest.approx(six_pt, rel=0.05)
    assert narayanan > six_pt  # the attention-score and logit terms only add work


def test_it_derives_narayanans_formula_from_per_layer_matmul_counts() -> None:
    # Narayanan et al. (2021) sec. 5.1: forward per layer 24Bsh^2 + 4Bs^2h, logits 2BshV;
    # backward = 2x forward, recomputation adds one more forward of the layers.
    b, s, n_layers, h, v = 4, 1024, 24, 2048, 50257
    layer_forward = 24 * b * s * h * h + 4 * b * s * s * h
    logits_forward = 2 * b * s * h * v
    without = 3 * n_layers * layer_forward + 3 * logits_forward
    with_recompute = 4 * n_layers * layer_forward + 3 * logits_forward
    assert narayanan_flops_per_iteration(b, s, n_layers, h, v, recompute=False) == pytest.approx(
        without, rel=1e-12
    )
    assert narayanan_flops_per_iteration(b, s, n_layers, h, v, recompute=True) == pytest.approx(
        with_recompute, rel=1e-12
    )


@pytest.mark.parametrize(
    ("parameters", "tokens", "gpus", "achieved_tflops", "published_days"),
    [
        (175e9, 300e9, 1024, 140.0, 34.0),  # GPT-3 on 1024 A100s
        (1e12, 450e9, 3072, 163.0, 84.0),  # 1T model on 3072 A100s
    ],
)
def test_it_reproduces_narayanans_end_to_end_training_days(
    parameters: float, tokens: float, gpus: int, achieved_tflops: float, published_days: float
) -> None:
    # Narayanan et al. (2021) sec. 5.1: time ~= 8TP / (nX) with recomputation, i.e. 6PT x 4/3.
    executed = training_flops(parameters, tokens) * 4 / 3
    utilization = achieved_tflops * 1e12 / A100_BF16
    days = wall_hours(executed, gpus, A100_BF16, utilization) / 24
    assert days == pytest.approx(published_days, rel=0.02)


def test_it_reproduces_llama2_7b_gpu_hours_within_five_percent_at_40_percent_utilization() -> None:
    # Llama 2 model card: 7B (6.74B parameters), 2.0T tokens, 184,320 A100-80GB GPU-hours.
    # At 40% of the bf16 peak (a typical Megatron-class MFU) 6PT gives ~180k GPU-hours.
    # Tolerance 5%: the card's hours include evaluation, checkpointing and restarts, and Meta
    # does not publish its utilization (184,320 h implies ~39%).
    hours = gpu_hours(training_flops(6.74e9, 2.0e12), get_gpu("A100-80GB").peak_flops["bf16"], 0.4)
    assert hours == pytest.approx(184_320, rel=0.05)


# ----------------------------------------------------------------------------- memory: ZeRO


@pytest.mark.parametrize(
    ("stage", "published_gb"),
    [(0, 120.0), (1, 31.4), (2, 16.6), (3, 1.9)],
)
def test_it_reproduces_the_zero_paper_figure_1_for_7_5b_parameters_on_64_gpus(
    stage: int, published_gb: float
) -> None:
    # Rajbhandari et al. (2020), figure 1: Psi = 7.5B, K = 12, N_d = 64 (GB = 1e9 bytes).
    memory = memory_per_device(7.5e9, precision="fp16", optimizer="adam", gpus=64, zero_stage=stage)
    assert memory.total / 1e9 == pytest.approx(published_gb, abs=0.05)
    assert memory.activations == 0


def test_it_reproduces_deepspeeds_current_zero2_and_documented_zero3_estimates() -> None:
    # DeepSpeed docs (memory.rst), t5-3b cold estimate: 2851M params, 32M largest layer,
    # 1 node x 8 GPUs, no offload: ZeRO-3 6.09GB per GPU (GB printed as GiB). For ZeRO-2 the
    # page still shows the old 4P + 16P/N (15.93GB); DeepSpeed's current
    # estimate_zero2_model_states_mem_needs computes 2P + 18P/N = 11.28 GiB.
    zero2 = deepspeed_model_states_bytes(2851e6, 8, 2)
    zero3 = deepspeed_model_states_bytes(2851e6, 8, 3, largest_layer_parameters=32e6)
    assert round(zero2 / GIB, 2) == 11.28
    assert round(zero3 / GIB, 2) == 6.09
    # Same page, t5-large on 4 GPUs: case 1 = 3291 MB (bytes >> 20).
    assert deepspeed_model_states_bytes(737.67e6, 4, 3, 32.90e6) >> 20 == 3291


@settings(max_examples=200)
@given(
    parameters=st.floats(min_value=1e6, max_value=1e12),
    gpus=st.integers(min_value=1, max_value=4096),
    stage=st.sampled_from([2, 3]),
)
def test_it_never_counts_more_model_states_than_deepspeeds_practical_estimator(
    parameters: float, gpus: int, stage: int
) -> None:
    # The paper's accounting is the floor; DeepSpeed adds working buffers on top.
    paper = memory_per_device(
        parameters, precision="bf16", optimizer="adamw", gpus=gpus, zero_stage=stage
    )
    assert paper.total <= deepspeed_model_states_bytes(parameters, gpus, stage) + 2


@pytest.mark.parametrize(
    ("precision", "optimizer", "expected"),
    [
        ("bf16", "adamw", (2, 2, 12)),
        ("fp16", "adam", (2, 2, 12)),
        ("fp8", "adamw", (2, 2, 12)),
        ("fp32", "adamw", (4, 4, 8)),
        ("tf32", "adam", (4, 4, 8)),
        ("bf16", "sgd", (2, 2, 8)),
        ("fp32", "sgd", (4, 4, 4)),
        ("bf16", "adafactor", (2, 2, 4)),
        ("fp32", "adafactor", (4, 4, 0)),
    ],
)
def test_it_uses_the_zero_papers_bytes_per_parameter(
    precision: str, optimizer: str, expected: tuple[int, int, int]
) -> None:
    states = model_state_bytes_per_parameter(precision, optimizer)
    assert (states.weights, states.gradients, states.optimizer) == expected


def test_it_divides_model_states_by_tensor_times_pipeline_parallel() -> None:
    memory = memory_per_device(
        7e9, precision="bf16", optimizer="adamw", gpus=8, tensor_parallel=2, pipeline_parallel=2
    )
    assert memory.weights == 7e9 * 2 / 4
    assert memory.total == 16 * 7e9 / 4


def test_it_divides_by_the_data_parallel_degree_left_after_model_parallelism() -> None:
    # 16 GPUs, t = 2, p = 2: N_d = 4, so ZeRO-3 divides the 4-way shard by 4 again.
    memory = memory_per_device(
        8e9,
        precision="bf16",
        optimizer="adamw",
        gpus=16,
        zero_stage=3,
        tensor_parallel=2,
        pipeline_parallel=2,
    )
    assert data_parallel_degree(16, 2, 2) == 4
    assert memory.total == 16 * 8e9 / 16


def test_it_refuses_a_gpu_count_that_model_parallelism_does_not_divide() -> None:
    with pytest.raises(EstimateInputError) as error:
        data_parallel_degree(6, 4, 1)
    assert error.value.field == "gpus"


@settings(max_examples=200, deadline=None)
@given(
    parameters=st.floats(min_value=1e6, max_value=1e12),
    dp=st.integers(min_value=1, max_value=512),
    tp=st.sampled_from([1, 2, 4, 8]),
    pp=st.sampled_from([1, 2, 4]),
    precision=st.sampled_from(["fp32", "tf32", "bf16", "fp16", "fp8"]),
    optimizer=st.sampled_from(["adamw", "adam", "sgd", "adafactor"]),
)
def test_it_never_needs_more_memory_at_a_higher_zero_stage(
    parameters: float, dp: int, tp: int, pp: int, precision: str, optimizer: str
) -> None:
    totals = [
        memory_per_device(
            parameters,
            precision=precision,
            optimizer=optimizer,
            gpus=dp * tp * pp,
            zero_stage=stage,
            tensor_parallel=tp,
            pipeline_parallel=pp,
            activations=10**9,
        ).total
        for stage in range(4)
    ]
    assert totals[3] <= totals[2] <= totals[1] <= totals[0]


def test_it_says_fits_up_to_exactly_the_device_memory() -> None:
    breakdown = MemoryBreakdown(10, 10, 10, 10, 40)
    assert fits_in_memory(breakdown, 40)
    assert not fits_in_memory(breakdown, 39)
    assert not fits_in_memory(breakdown, 45, headroom_bytes=6)


# ------------------------------------------------------------------------ memory: activations

S, B, H, A = 2048, 1, 12288, 96  # GPT-3 175B layer shape (Korthikanti et al. 2022, table 3)


def test_it_counts_korthikantis_34sbh_plus_5as2b_bytes_per_layer() -> None:
    per_layer = S * B * H * (34 + 5 * A * S / H)
    assert activation_bytes(S, B, H, A, 1) == math.ceil(per_layer)
    assert activation_bytes(S, B, H, A, 96) == math.ceil(per_layer * 96)


def test_it_divides_activations_by_t_with_sequence_parallelism() -> None:
    full = S * B * H * (34 + 5 * A * S / H)
    assert activation_bytes(S, B, H, A, 1, tensor_parallel=8) == math.ceil(full / 8)


def test_it_keeps_replicated_parts_without_sequence_parallelism() -> None:
    # Korthikanti eq. (2): s b h (10 + 24/t + 5 a s / (h t)).
    expected = S * B * H * (10 + 24 / 8 + 5 * A * S / (H * 8))
    got = activation_bytes(S, B, H, A, 1, tensor_parallel=8, sequence_parallel=False)
    assert got == pytest.approx(expected, abs=1)


def test_it_keeps_only_the_layer_input_with_full_recomputation() -> None:
    assert activation_bytes(S, B, H, A, 96, recompute=True) == 2 * S * B * H * 96


def test_it_drops_the_attention_scores_with_flash_attention() -> None:
    assert activation_bytes(S, B, H, A, 1, flash_attention=True) == 34 * S * B * H


def test_it_doubles_stored_values_but_not_dropout_masks_in_fp32() -> None:
    expected = S * B * H * 66 + A * S * S * B * 9
    assert activation_bytes(S, B, H, A, 1, precision="fp32") == expected


def test_it_holds_p_microbatches_of_l_over_p_layers_on_the_first_pipeline_stage() -> None:
    single = activation_bytes(S, B, H, A, 96)
    assert activation_bytes(S, B, H, A, 96, pipeline_parallel=4) == single
    one_in_flight = activation_bytes(S, B, H, A, 96, pipeline_parallel=4, in_flight_microbatches=1)
    assert one_in_flight == pytest.approx(single / 4, abs=1)


# ------------------------------------------------------------------------------------ time


def test_it_turns_flops_into_wall_and_gpu_hours() -> None:
    # 4.2e22 FLOPs on 8 A100s at 40%: 4.2e22 / (8 x 3.12e14 x 0.4) s.
    hours = wall_hours(4.2e22, 8, A100_BF16, 0.4)
    assert hours == pytest.approx(4.2e22 / (8 * A100_BF16 * 0.4) / 3600)
    assert gpu_hours(4.2e22, A100_BF16, 0.4) == pytest.approx(hours * 8)


@pytest.mark.parametrize("utilization", [0.0, -0.1, 1.01, float("nan"), float("inf")])
def test_it_rejects_utilization_outside_zero_to_one_naming_the_field(utilization: float) -> None:
    with pytest.raises(ValueError, match="utilization") as error:
        wall_hours(1e20, 1, A100_BF16, utilization)
    assert isinstance(error.value, EstimateInputError)
    assert error.value.field == "utilization"


def test_it_scales_a_pilot_linearly_to_the_planned_gpus() -> None:
    on_pilot = time_from_pilot(1e12, 25_000, pilot_gpus=8, gpus=8)
    doubled = time_from_pilot(1e12, 25_000, pilot_gpus=8, gpus=16)
    assert on_pilot.wall_hours == pytest.approx(1e12 / 25_000 / 3600)
    assert doubled.wall_hours == pytest.approx(on_pilot.wall_hours / 2)
    assert doubled.gpu_hours == pytest.approx(on_pilot.gpu_hours)


def test_it_adds_the_overheads_that_extrapolation_forgets() -> None:
    overheads = Overheads(
        loading_hours=2,
        long_input_hours=1,
        validation_fraction=0.1,
        output_hours=0.5,
        checkpoint_hours=1.5,
    )
    time = time_from_pilot(3600 * 100.0, 1.0, pilot_gpus=1, gpus=1, overheads=overheads)
    assert time.training_wall_hours == pytest.approx(100)
    assert time.overhead_hours == pytest.approx(10 + 2 + 1 + 0.5 + 1.5)
    assert time.wall_hours == pytest.approx(115)


@settings(max_examples=200)
@given(
    flops=st.floats(min_value=1e15, max_value=1e25),
    gpus=st.integers(min_value=1, max_value=4096),
    extra=st.integers(min_value=1, max_value=4096),
    utilization=st.floats(min_value=0.01, max_value=1.0),
    loading=st.floats(min_value=0, max_value=100),
)
def test_it_never_takes_more_wall_hours_with_more_gpus(
    flops: float, gpus: int, extra: int, utilization: float, loading: float
) -> None:
    overheads = Overheads(loading_hours=loading, validation_fraction=0.1)
    fewer = time_from_flops(flops, gpus, A100_BF16, utilization, overheads)
    more = time_from_flops(flops, gpus + extra, A100_BF16, utilization, overheads)
    assert more.wall_hours <= fewer.wall_hours
    piloted_fewer = time_from_pilot(1e12, 1e4, 8, gpus, overheads)
    piloted_more = time_from_pilot(1e12, 1e4, 8, gpus + extra, overheads)
    assert piloted_more.wall_hours <= piloted_fewer.wall_hours


# ------------------------------------------------------------------------------------ money


def test_it_prices_hourly_rental_as_gpus_times_hours_times_rate_plus_extra() -> None:
    assert hourly_cost(8, 10, Decimal("1.50"), Decimal("12.00")) == Decimal("132.00")
    assert hourly_cost(8, 11111.111111111111, Decimal("1.50")) == Decimal("133333.33")


def test_it_rounds_half_cents_up_not_to_even() -> None:
    assert hourly_cost(1, 1, Decimal("0.125")) == Decimal("0.13")
    assert hourly_cost(1, 1, Decimal("0.135")) == Decimal("0.14")


def test_it_reads_float_hours_as_their_decimal_repr() -> None:
    # The float 2.675 is 2.67499999999999982236...; read exactly it would round to 2.67.
    assert hourly_cost(1, 2.675, Decimal("1")) == Decimal("2.68")
    assert hourly_cost(3, 0.1, Decimal("1")) == Decimal("0.30")


def test_it_refuses_negative_money_naming_the_field() -> None:
    with pytest.raises(EstimateInputError) as error:
        hourly_cost(1, 1, Decimal("-1"))
    assert error.value.field == "rate_per_gpu_hour"


@settings(max_examples=300)
@given(
    gpus=st.integers(min_value=0, max_value=10_000),
    hours=st.decimals(min_value=0, max_value=100_000, places=3),
    rate=st.decimals(min_value=0, max_value=1000, places=4),
    extra=st.decimals(min_value=0, max_value=100_000, places=2),
)
def test_it_prices_exactly_in_decimal_and_never_negative(
    gpus: int, hours: Decimal, rate: Decimal, extra: Decimal
) -> None:
    cost = hourly_cost(gpus, hours, rate, extra)
    assert isinstance(cost, Decimal)
    assert cost >= 0
    assert cost.as_tuple().exponent == -2
    assert abs(cost - (gpus * hours * rate + extra)) <= Decimal("0.005")


def test_it_prices_lots_per_lot_never_per_gpu() -> None:
    assert lot_cost(2, Decimal("47.14")) == Decimal("94.28")
    # A two-GPU B200 lot costs its price once.
    assert lot_cost(1, Decimal("648.00")) == Decimal("648.00")
    assert lot_cost(0, Decimal("47.14")) == Decimal("0.00")


# -------------------------------------------------------------------------- checkpoints, laws


def test_it_computes_youngs_interval_as_sqrt_2cm() -> None:
    # 5-minute checkpoint, 24-hour MTBF: sqrt(2 x (1/12) x 24) = 2 hours.
    assert young_interval(5 / 60, 24) == pytest.approx(2.0)
    assert young_interval(60, 86_400) == pytest.approx(math.sqrt(2 * 60 * 86_400))


def test_it_applies_dalys_higher_order_correction() -> None:
    # Daly (2006) eq. (37): 2 x (1 + (1/3)(1/24) + (1/9)(1/576)) - 1/12 = 1.94483 hours.
    assert daly_interval(5 / 60, 24) == pytest.approx(1.944830, abs=1e-5)
    assert daly_interval(5 / 60, 24) < young_interval(5 / 60, 24)
    # When a checkpoint costs at least 2 MTBF, Daly's optimum is the MTBF itself.
    assert daly_interval(50, 24) == 24


def test_it_splits_chinchillas_budget_into_70b_parameters_and_1_4t_tokens() -> None:
    # Hoffmann et al. (2022): Chinchilla, 70B parameters on 1.4T tokens, C = 6ND.
    split = chinchilla_optimal(6 * 70e9 * 1.4e12)
    assert split.parameters == pytest.approx(70e9, rel=0.01)
    assert split.tokens == pytest.approx(1.4e12, rel=0.01)
    # Gopher's budget (5.76e23 FLOPs) is the one Chinchilla was trained at: ~70B, ~1.4T.
    gopher_budget = chinchilla_optimal(5.76e23)
    assert gopher_budget.parameters == pytest.approx(70e9, rel=0.05)
    assert gopher_budget.tokens == pytest.approx(1.4e12, rel=0.05)


def test_it_says_halving_the_model_or_the_data_raises_loss_by_kaplans_exponents() -> None:
    assert kaplan_loss_ratio(0.5, KAPLAN_ALPHA_PARAMETERS) == pytest.approx(1.0541, abs=1e-4)
    assert kaplan_loss_ratio(0.5, KAPLAN_ALPHA_DATA) == pytest.approx(1.0680, abs=1e-4)
    assert kaplan_loss_ratio(2.0, KAPLAN_ALPHA_PARAMETERS) < 1


# --------------------------------------------------------------------- serving, local vs cloud


def test_it_accumulates_inference_cost_and_finds_when_it_passes_training() -> None:
    # 7B served 1e9 tokens/month: 1.4e19 FLOPs / (3.12e14 x 0.5) = 24.93 GPU-hours a month.
    projection = inference_projection(
        7e9, 1e9, A100_BF16, 0.5, Decimal("2.00"), months=6, training_cost=Decimal("100.00")
    )
    assert projection.monthly_gpu_hours == pytest.approx(1.4e19 / (A100_BF16 * 0.5) / 3600)
    assert projection.monthly_cost == Decimal("49.86")
    assert projection.cumulative_costs[1] == Decimal("99.72")
    assert projection.cumulative_costs[-1] == Decimal("299.16")
    assert projection.month_exceeding_training == 3


def test_it_breaks_even_on_owned_hardware_only_when_renting_costs_more_than_power() -> None:
    # 2000 USD box; cloud 0.50/h, power 0.10/h, 200 h/month: saves 80 a month -> 25 months.
    assert break_even_months(Decimal("2000"), Decimal("0.50"), 200, Decimal("0.10")) == 25
    assert break_even_months(Decimal("2001"), Decimal("0.50"), 200, Decimal("0.10")) == 26
    assert break_even_months(Decimal("2000"), Decimal("0.10"), 200, Decimal("0.10")) is None
    assert break_even_months(Decimal("2000"), Decimal("0.50"), 0) is None

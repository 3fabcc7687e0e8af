"""estimate(): the whole answer of POST /estimates/preview/ for docs/api.md's example and its
variations (time, memory advice, levers, communication). Split from test_formulas."""

from __future__ import annotations

import re
from dataclasses import replace
from decimal import Decimal

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from estimates.domain.formulas import (
    CostSpec,
    EstimateInput,
    EstimateInputError,
    HardwareSpec,
    ModelSpec,
    Overheads,
    PilotSpec,
    TrainingSpec,
    daly_interval,
    estimate,
)

A100_BF16 = 312e12


# -------------------------------------------------------------------------------- estimate()


def api_example(**changes: object) -> EstimateInput:
    """docs/api.md's request for POST /estimates/preview/."""
    example = EstimateInput(
        model=ModelSpec(7e9, layers=32, hidden_size=4096, attention_heads=32, vocab_size=32000),
        training=TrainingSpec(
            tokens=1e12,
            epochs=1,
            sequence_length=4096,
            micro_batch_size=1,
            precision="bf16",
            optimizer="adamw",
            activation_checkpointing=False,
        ),
        hardware=HardwareSpec(
            gpu="A100-80GB",
            count=8,
            utilization=0.4,
            zero_stage=0,
            tensor_parallel=1,
            pipeline_parallel=1,
        ),
        pilot=PilotSpec(tokens_per_second=25_000, gpus=8),
        cost=CostSpec(Decimal("1.50"), "USD", Decimal("0.00")),
    )
    return replace(example, **changes)  # type: ignore[arg-type]


def test_it_answers_the_api_example_from_the_pilot() -> None:
    result = estimate(api_example())
    assert result.training_flops == pytest.approx(4.2e22)
    assert result.time_source == "pilot"
    assert result.wall_hours == pytest.approx(1e12 / 25_000 / 3600)
    assert result.gpu_hours == pytest.approx(8 * 1e12 / 25_000 / 3600)
    assert result.cost is not None
    assert (result.cost.amount, result.cost.currency) == (Decimal("133333.33"), "USD")
    assert (result.memory.weights, result.memory.gradients) == (14_000_000_000, 14_000_000_000)
    assert result.memory.optimizer == 84_000_000_000
    assert result.narayanan_flops == pytest.approx(4.2e22, rel=0.15)


def test_it_explains_how_to_fit_when_memory_is_short_with_numbers() -> None:
    result = estimate(api_example())
    assert not result.fits_in_memory
    text = "\n".join(result.recommendations)
    assert "Does not fit" in text
    assert "ZeRO stage" in text and "GiB per device" in text
    # 16 bytes/param x 7e9 alone exceeds 80 GiB; ZeRO-1 plus FlashAttention is the fewest changes.
    assert "Combining ZeRO stage 1 and FlashAttention" in text


def test_it_names_the_zero_stage_that_fits_on_the_same_gpus() -> None:
    training = TrainingSpec(tokens=1e12, sequence_length=4096, activation_checkpointing=True)
    result = estimate(api_example(training=training))
    assert not result.fits_in_memory
    assert any(
        line.startswith("With ZeRO stage 1 on 8 GPUs") and line.endswith("fits.")
        for line in result.recommendations
    )


def test_it_computes_how_many_gpus_would_fit() -> None:
    # 30B parameters, ZeRO-3, recomputation: 480e9 / n plus the activations, the logits and the
    # framework's 512 MiB, at the memory range's high end, within 80 GiB.
    inp = api_example(
        model=ModelSpec(30e9, layers=60, hidden_size=6656, attention_heads=52, vocab_size=32000),
        training=TrainingSpec(tokens=1e11, sequence_length=2048, activation_checkpointing=True),
        hardware=HardwareSpec("A100-80GB", count=4, zero_stage=3),
        pilot=None,
    )
    result = estimate(inp)
    assert not result.fits_in_memory
    words = "\n".join(result.recommendations)
    found = re.search(r"With ZeRO stage 3, (\d+) GPUs would fit", words)
    assert found is not None, words

    def fits(count: int) -> bool:
        hardware = HardwareSpec("A100-80GB", count=count, zero_stage=3)
        return estimate(
            api_example(hardware=hardware, model=inp.model, training=inp.training)
        ).fits_in_memory

    # The fewest: that many fit at the memory range's high end (§24.12), one fewer does not.
    assert fits(int(found[1])) and not fits(int(found[1]) - 1)


def test_it_assumes_utilization_without_a_pilot_and_says_to_measure_one() -> None:
    result = estimate(api_example(pilot=None))
    assert result.time_source == "assumed"
    # PaLM appendix B: 6N + 12 L h s FLOPs per token once the architecture is known.
    per_token = 6 * 7e9 + 12 * 32 * 4096 * 4096
    # Within 0.1%: DDP's last 25 MiB gradient bucket cannot hide behind the backward (§24.6).
    assert result.wall_hours == pytest.approx(
        1e12 * per_token / (8 * A100_BF16 * 0.4) / 3600, rel=1e-3
    )
    assert any("measure a short pilot before launching" in r for r in result.recommendations)
    assert result.pilot_utilization is None


def test_it_charges_recomputation_one_extra_forward_pass_in_assumed_time() -> None:
    plain = estimate(api_example(pilot=None))
    training = TrainingSpec(tokens=1e12, sequence_length=4096, activation_checkpointing=True)
    recomputed = estimate(api_example(pilot=None, training=training))
    assert recomputed.training_flops == plain.training_flops
    # Within 0.1%: only the compute grows by 4/3, not the last bucket's exposed all-reduce.
    assert recomputed.wall_hours == pytest.approx(plain.wall_hours * 4 / 3, rel=1e-3)


def test_it_says_overheads_were_assumed_zero_when_none_are_given() -> None:
    without = estimate(api_example())
    assert any("assumed to take zero hours" in r for r in without.recommendations)
    overheads = Overheads(loading_hours=5, validation_fraction=0.1)
    given_overheads = estimate(api_example(overheads=overheads))
    assert not any("assumed to take zero hours" in r for r in given_overheads.recommendations)
    assert given_overheads.wall_hours == pytest.approx(without.wall_hours * 1.1 + 5)


def test_it_prices_each_cost_lever_when_a_cost_is_given() -> None:
    inp = api_example(training=TrainingSpec(tokens=1e12, sequence_length=4096, epochs=2))
    result = estimate(inp)
    assert result.cost is not None
    levers = {lever.name: lever for lever in result.levers}
    assert set(levers) == {"half_model", "half_data", "fewer_epochs"}
    half_model_cost = levers["half_model"].cost
    assert half_model_cost is not None
    assert half_model_cost.amount == pytest.approx(result.cost.amount / 2, abs=Decimal("0.01"))
    assert levers["half_model"].loss_ratio == pytest.approx(1.054, abs=1e-3)
    fewer_epochs_cost = levers["fewer_epochs"].cost
    assert fewer_epochs_cost is not None
    assert fewer_epochs_cost.amount == pytest.approx(result.cost.amount / 2, abs=Decimal("0.01"))
    assert any("half the model" in r and "USD instead of" in r for r in result.recommendations)


def test_it_offers_lower_precision_where_the_gpu_supports_it() -> None:
    training = TrainingSpec(tokens=1e12, sequence_length=4096, precision="fp32")
    result = estimate(api_example(training=training, pilot=None))
    lower = next(lever for lever in result.levers if lever.name == "lower_precision")
    # A100: bf16 312 TFLOPS vs fp32 19.5 TFLOPS -> 16x less compute at the same utilization
    # (within 0.1%: the last gradient bucket's exposed all-reduce does not shrink with it).
    assert lower.wall_hours == pytest.approx(result.wall_hours / 16, rel=1e-3)


def test_it_treats_samples_times_tokens_per_sample_like_tokens() -> None:
    by_samples = TrainingSpec(samples=2.5e8, tokens_per_sample=4000, sequence_length=4096)
    assert estimate(api_example(training=by_samples)).training_flops == pytest.approx(4.2e22)


def test_it_flags_a_pilot_faster_than_the_gpu_can_be() -> None:
    result = estimate(api_example(pilot=PilotSpec(tokens_per_second=1e6, gpus=1)))
    assert result.pilot_utilization is not None and result.pilot_utilization > 1
    assert any("impossible" in r for r in result.recommendations)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"hardware": HardwareSpec("A100-80GB", 8, utilization=0.0)}, "hardware.utilization"),
        ({"hardware": HardwareSpec("A100-80GB", 8, utilization=1.5)}, "hardware.utilization"),
        ({"model": ModelSpec(-1)}, "model.parameters"),
        ({"model": ModelSpec(7e9, layers=0)}, "model.layers"),
        ({"hardware": HardwareSpec("A100-80GB", 8, zero_stage=4)}, "hardware.zero_stage"),
        ({"hardware": HardwareSpec("A100-80GB", 6, tensor_parallel=4)}, "hardware.count"),
        ({"hardware": HardwareSpec("A100-80GB", 0)}, "hardware.count"),
        ({"hardware": HardwareSpec("Z100", 8)}, "hardware.gpu"),
        ({"hardware": HardwareSpec("V100-32GB", 8)}, "training.precision"),
        ({"training": TrainingSpec(tokens=1e12, precision="int4")}, "training.precision"),
        ({"training": TrainingSpec(tokens=1e12, optimizer="lion")}, "training.optimizer"),
        ({"training": TrainingSpec()}, "training.tokens"),
        ({"training": TrainingSpec(tokens=1e12, epochs=0)}, "training.epochs"),
        ({"training": TrainingSpec(samples=10)}, "training.tokens_per_sample"),
        (
            {"pilot": PilotSpec(tokens_per_second=1, samples_per_second=1)},
            "pilot.tokens_per_second",
        ),
        ({"pilot": PilotSpec(samples_per_second=-3)}, "pilot.samples_per_second"),
        ({"overheads": Overheads(loading_hours=-1)}, "overheads.loading_hours"),
        ({"cost": CostSpec(Decimal("-1.50"))}, "cost.hourly_rate_per_gpu"),
        ({"cost": CostSpec(Decimal("1.50"), "dollars")}, "cost.currency"),
    ],
)
def test_it_names_the_offending_field_in_api_dotted_form(
    changes: dict[str, object], field: str
) -> None:
    with pytest.raises(ValueError) as error:
        estimate(api_example(**changes))
    assert isinstance(error.value, EstimateInputError)
    assert error.value.field == field


def _hours_cost_and_link(
    count: int, utilization: float, stage: int, with_pilot: bool
) -> tuple[float, Decimal, str | None]:
    result = estimate(
        api_example(
            hardware=HardwareSpec("H100-SXM", count, utilization, zero_stage=stage),
            pilot=PilotSpec(tokens_per_second=5e4, gpus=8) if with_pilot else None,
        )
    )
    assert result.cost is not None
    link = result.communication.link if result.communication is not None else None
    return result.wall_hours, result.cost.amount, link


@settings(max_examples=60, deadline=None)
@given(
    count=st.integers(min_value=1, max_value=256),
    extra=st.integers(min_value=1, max_value=256),
    utilization=st.floats(min_value=0.05, max_value=1.0),
    stage=st.integers(min_value=0, max_value=3),
    with_pilot=st.booleans(),
)
def test_more_gpus_over_the_same_link_never_take_more_wall_hours_or_cost_below_zero(
    count: int, extra: int, utilization: float, stage: int, with_pilot: bool
) -> None:
    """Over one kind of link (§24.6) a step's exposed communication does not grow with the
    GPUs while its share of the steps shrinks. Across the node boundary it may: the next test."""
    fewer_hours, fewer_cost, fewer_link = _hours_cost_and_link(
        count, utilization, stage, with_pilot
    )
    more_hours, more_cost, more_link = _hours_cost_and_link(
        count + extra, utilization, stage, with_pilot
    )
    assert fewer_cost >= 0 and more_cost >= 0
    assume(fewer_link == more_link)
    assert more_hours <= fewer_hours


def test_a_ninth_gpu_on_a_second_node_does_not_slow_a_zero_3_run_down() -> None:
    """Eight H100s talk over NVLink; a ninth puts the run on two nodes. NCCL's rings then run
    through every NIC of the node, and FSDP prefetches each layer's gather behind the previous
    layer's compute (§24.6): the run is not slower, as MosaicML's tables measure (13B on 8 and
    16 H100: 4,792 and 4,767 tokens/s per GPU)."""
    eight_hours, _, eight_link = _hours_cost_and_link(8, 0.5, 3, False)
    nine_hours, _, nine_link = _hours_cost_and_link(9, 0.5, 3, False)
    assert (eight_link, nine_link) == ("card-to-card", "node-to-node")
    assert nine_hours <= eight_hours
    assert _hours_cost_and_link(16, 0.5, 3, False)[0] < nine_hours


@settings(max_examples=200)
@given(
    cost=st.floats(min_value=1e-3, max_value=10.0),
    mtbf=st.floats(min_value=1.0, max_value=1e4),
    change=st.sampled_from([0.8, 0.9, 1.1, 1.25]),
)
def test_dalys_interval_nearly_minimizes_dalys_expected_wall_time(
    cost: float, mtbf: float, change: float
) -> None:
    # Daly (2006): eq. (37) approximates the minimum of eq. (20) to higher order than Young's;
    # moving away from it by 10-25% never saves more than a hair (0.1%) of wall time.
    from estimates.domain.formulas import daly_wall_time

    tau = daly_interval(cost, mtbf)
    # Eq. (37) is the expansion for a checkpoint cheap next to the MTBF; towards its limit
    # (cost -> 2 MTBF, where it becomes tau = MTBF) it drifts: at cost/MTBF = 1.94 a 10% longer
    # interval saves 0.11% (hypothesis found it). The claim is held where the method holds it.
    if cost >= mtbf:
        return
    best = daly_wall_time(100.0, tau, cost, mtbf)
    assert best <= daly_wall_time(100.0, tau * change, cost, mtbf) * 1.001

"""Activation memory given per sample (non-transformers), gradient accumulation and the measured
FP8/FP4 levers (issue 17): published figures reproduced by estimates.domain.formulas, no
database. docs/domain.md §24.5, §24.7, §24.10."""

from __future__ import annotations

import pytest

from catalog.domain.catalog import GIB, GpuModel
from estimates.domain.formulas import (
    EstimateInput,
    EstimateInputError,
    EstimateResult,
    HardwareSpec,
    Lever,
    ModelSpec,
    PilotSpec,
    TrainingSpec,
    estimate,
)
from estimates.domain.formulas.communication import CollectiveCost, Communication

MIB = 2**20
# torchvision's resnet50: 25,557,032 parameters.
RESNET50_PARAMETERS = 25_557_032
# knjcode/mxnet-finetuner docs/benchmark.md, "Memory usage (MiB)": ResNet-50 trained with SGD
# (fp32) on a Maxwell TITAN X (12 GiB), by batch size.
MXNET_RESNET50_MIB = {10: 1875, 20: 3080, 30: 4265, 40: 5483}
TITAN_X = GpuModel(
    name="TITAN X (Maxwell)", memory_bytes=12 * GIB, peak_flops={"fp32": 6.1e12}, source="test"
)


def resnet50(batch: int, activation_bytes: float | None) -> EstimateInput:
    return EstimateInput(
        model=ModelSpec(parameters=RESNET50_PARAMETERS),
        training=TrainingSpec(
            samples=1.28e6,
            flops_per_sample=4.1e9,
            micro_batch_size=batch,
            precision="fp32",
            optimizer="sgd",
            activation_bytes_per_sample=activation_bytes,
        ),
        hardware=HardwareSpec(gpu=TITAN_X),
    )


# ------------------------------------------------------------------ §24.5 activations per sample


def test_resnet_50s_memory_follows_the_published_mxnet_table_from_its_activations_per_image() -> (
    None
):
    # The table's batch 10 and 40 give 120.3 MiB per image; the estimate adds the fp32 SGD
    # states (4 + 4 + 4 bytes per parameter, 292 MiB). Peak memory also holds the framework's
    # constant (CUDA context, cuDNN workspace): read from the batch-10 point, 380 MiB on MXNet
    # and CUDA 8, where the estimate counts 512 MiB for today's stacks (docs/domain.md §24.2).
    # Batches 20 and 30 are then predictions, within 1%.
    per_image = (MXNET_RESNET50_MIB[40] - MXNET_RESNET50_MIB[10]) / 30 * MIB
    ten = estimate(resnet50(10, per_image)).memory
    assert ten.framework == 512 * MIB
    framework_mib = MXNET_RESNET50_MIB[10] - (ten.total - ten.framework) / MIB
    assert 300 < framework_mib < 450
    for batch in (20, 30):
        result = estimate(resnet50(batch, per_image))
        assert result.activations_counted
        assert result.fits_in_memory  # the table ran these batches on the 12 GiB card
        modelled = result.memory.total - result.memory.framework
        predicted_mib = modelled / MIB + framework_mib
        assert predicted_mib == pytest.approx(MXNET_RESNET50_MIB[batch], rel=0.01)


def test_a_cnn_whose_activations_exceed_the_card_does_not_fit_and_says_why() -> None:
    result = estimate(resnet50(120, 120.3 * MIB))  # 14 GiB of activations on a 12 GiB card
    assert not result.fits_in_memory
    assert result.memory.activations == pytest.approx(120 * 120.3 * MIB, abs=1)
    assert any("micro-batch size 1 with gradient accumulation" in r for r in result.recommendations)
    # The transformer-only levers say nothing about a CNN's stated activations.
    assert not any("FlashAttention" in r for r in result.recommendations)


def test_without_an_activation_size_a_cnns_memory_says_activations_are_not_counted() -> None:
    result = estimate(resnet50(40, None))
    assert not result.activations_counted
    assert result.memory.activations == 0
    assert any("training.activation_bytes_per_sample" in r for r in result.recommendations)


def test_a_negative_activation_size_is_refused_naming_the_field() -> None:
    with pytest.raises(EstimateInputError) as refused:
        estimate(resnet50(8, -1.0))
    assert refused.value.field == "training.activation_bytes_per_sample"


# ------------------------------------------------------------------ §24.10 gradient accumulation

# NVIDIA NeMo performance summary (DGX-H100, LLAMA3-8B pre-training): 8 GPUs, GBS 128, MBS 1,
# sequence 8192, TP 1, PP 1, CP 2, GA 32.
NEMO_8B = ModelSpec(
    parameters=8.03e9,
    layers=32,
    hidden_size=4096,
    attention_heads=32,
    key_value_heads=8,
    vocab_size=128256,
)


def nemo_8b(accumulation: int) -> EstimateInput:
    return EstimateInput(
        model=NEMO_8B,
        training=TrainingSpec(
            tokens=1e10,
            sequence_length=8192,
            micro_batch_size=1,
            flash_attention=True,
            gradient_accumulation_steps=accumulation,
        ),
        hardware=HardwareSpec(gpu="H100-SXM", count=8, context_parallel=2, zero_stage=1),
    )


def test_nemos_llama3_8b_layout_has_its_published_global_batch_of_128() -> None:
    result = estimate(nemo_8b(32))
    comm = result.communication
    assert comm is not None
    assert comm.global_batch_size == 128  # MBS 1 x GA 32 x DP 4 (8 GPUs / CP 2)
    assert comm.steps == pytest.approx(1e10 / (128 * 8192))


def test_accumulation_keeps_the_micro_batchs_memory_and_takes_32_times_fewer_steps() -> None:
    one, thirty_two = estimate(nemo_8b(1)), estimate(nemo_8b(32))
    assert thirty_two.memory == one.memory
    assert thirty_two.training_flops == one.training_flops
    assert one.communication is not None and thirty_two.communication is not None
    assert one.communication.steps == pytest.approx(32 * thirty_two.communication.steps)


def pcie_3b(accumulation: int, zero_stage: int = 0) -> EstimateInput:
    # Short sequences on PCIe cards: the gradient all-reduce outlasts one micro-batch's backward.
    return EstimateInput(
        model=ModelSpec(parameters=3e9),
        training=TrainingSpec(
            tokens=1e9, sequence_length=512, gradient_accumulation_steps=accumulation
        ),
        hardware=HardwareSpec(gpu="RTX-4090", count=8, zero_stage=zero_stage),
    )


def test_accumulating_8_micro_batches_all_reduces_an_eighth_as_often_on_pcie() -> None:
    # PyTorch DDP's no_sync(): gradients are synchronised once per optimizer step, at the last
    # micro-batch, whose backward alone can hide the all-reduce.
    one, eight = estimate(pcie_3b(1)), estimate(pcie_3b(8))
    c1, c8 = one.communication, eight.communication
    assert c1 is not None and c8 is not None
    assert c1.exposed_seconds_per_step > 0
    assert c8.exposed_seconds_per_step == pytest.approx(c1.exposed_seconds_per_step)
    assert c8.steps * c8.exposed_seconds_per_step == pytest.approx(
        c1.steps * c1.exposed_seconds_per_step / 8
    )
    assert c8.scaling_efficiency > c1.scaling_efficiency
    assert eight.training_wall_hours < one.training_wall_hours


def test_zero_2_reduce_scatters_every_micro_batch_so_accumulation_saves_no_traffic() -> None:
    one, eight = estimate(pcie_3b(1, zero_stage=2)), estimate(pcie_3b(8, zero_stage=2))
    c1, c8 = one.communication, eight.communication
    assert c1 is not None and c8 is not None

    def scatter(comm: Communication) -> CollectiveCost:
        return next(c for c in comm.collectives if c.collective == "reduce_scatter")

    assert scatter(c8).bytes_per_step == pytest.approx(8 * scatter(c1).bytes_per_step)
    assert scatter(c8).exposed_seconds_per_step == pytest.approx(
        8 * scatter(c1).exposed_seconds_per_step
    )
    # Only the weights' gather after the optimizer step is shared by the 8 micro-batches.
    gather = [c for c in c8.collectives if c.collective == "all_gather"]
    assert [c.bytes_per_step for c in gather] == [
        c.bytes_per_step for c in c1.collectives if c.collective == "all_gather"
    ]


# ------------------------------------------------------------------ §24.7 measured speed-ups


def lever(result: EstimateResult, name: str) -> Lever:
    return next(lever for lever in result.levers if lever.name == name)


def dense_8b(gpu: str, precision: str = "bf16", pilot: PilotSpec | None = None) -> EstimateResult:
    return estimate(
        EstimateInput(
            model=ModelSpec(parameters=8e9),
            training=TrainingSpec(tokens=1e10, precision=precision),
            hardware=HardwareSpec(gpu=gpu, count=8),
            pilot=pilot,
        )
    )


def test_the_fp8_lever_is_torchaos_measured_1_25x_not_the_peaks_2x() -> None:
    # torchao.float8 README: up to 1.25x end to end, Llama 3 8B on 8 H100 (torchtitan). The
    # H100's fp8 peak is twice its bf16 peak: the old lever halved the time.
    result = dense_8b("H100-SXM")
    fp8 = lever(result, "lower_precision")
    assert result.training_wall_hours / fp8.wall_hours == pytest.approx(1.25, rel=1e-3)
    assert "torchao" in fp8.description


def test_the_fp4_lever_on_b200_is_nvidias_measured_1_59x_not_the_peaks_4x() -> None:
    # NVIDIA's NVFP4 pretraining of Llama 3 8B on GB200 NVL72 (NeMo Megatron-Bridge): 1,850
    # model TFLOP/s per GPU against 1,165 in bf16; the B200's FP4 peak is 4x its bf16 peak.
    result = dense_8b("B200")
    fp4 = lever(result, "fp4_precision")
    assert result.training_wall_hours / fp4.wall_hours == pytest.approx(1850 / 1165, rel=1e-3)
    assert "1,850 vs 1,165" in fp4.description


def test_the_fp4_lever_scales_a_pilots_throughput_by_the_same_measured_factor() -> None:
    result = dense_8b("RTX-5090", pilot=PilotSpec(tokens_per_second=20_000, gpus=8))
    fp4 = lever(result, "fp4_precision")
    assert result.training_wall_hours / fp4.wall_hours == pytest.approx(1850 / 1165, rel=1e-3)


@pytest.mark.parametrize(
    ("gpu", "precision"),
    [("H100-SXM", "bf16"), ("RTX-4090", "bf16"), ("B200", "fp8"), ("B200", "fp32")],
)
def test_no_fp4_lever_without_an_fp4_card_or_a_16_bit_run_to_compare(
    gpu: str, precision: str
) -> None:
    names = {lever.name for lever in dense_8b(gpu, precision).levers}
    assert "fp4_precision" not in names

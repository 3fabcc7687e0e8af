"""The GPU catalogue and seed rental plans hold datasheet and seed figures (no database)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from catalog.domain.catalog import GIB, GPUS, RENTAL_PLANS, get_gpu
from estimates.domain.formulas import lot_cost

REQUIRED = [
    "V100-32GB",
    "T4",
    "A10",
    "L4",
    "L40S",
    "A100-40GB",
    "A100-80GB",
    "H100-SXM",
    "H100-PCIe",
    "H200",
    "B200",
    "RTX-3090",
    "RTX-4090",
]


def test_it_lists_every_required_gpu_model() -> None:
    assert set(REQUIRED) <= set(GPUS)


def test_it_holds_the_a100_datasheet_figures() -> None:
    a100 = get_gpu("A100-80GB")
    assert a100.peak_flops["bf16"] == 3.12e14
    assert a100.peak_flops["fp32"] == 1.95e13
    assert a100.peak_flops["tf32"] == 1.56e14
    assert a100.memory_bytes == 80 * GIB
    assert get_gpu("A100-40GB").memory_bytes == 40 * GIB


@pytest.mark.parametrize(
    ("name", "precision", "dense_tflops"),
    [
        ("H100-SXM", "bf16", 989.5),  # datasheet 1,979 with sparsity
        ("H100-SXM", "fp8", 1979.0),  # datasheet 3,958 with sparsity
        ("H100-PCIe", "bf16", 756.5),  # datasheet 1,513 with sparsity
        ("L4", "bf16", 121.0),  # datasheet 242 with sparsity
        ("L40S", "bf16", 362.05),  # datasheet 733 with sparsity
        ("B200", "bf16", 2250.0),  # HGX B200 4.5 PF per GPU with sparsity
        ("RTX-4090", "bf16", 165.2),  # FP32 accumulate, dense
    ],
)
def test_it_stores_dense_not_sparsity_figures(
    name: str, precision: str, dense_tflops: float
) -> None:
    assert get_gpu(name).peak_flops[precision] == pytest.approx(dense_tflops * 1e12)


@pytest.mark.parametrize("name", REQUIRED)
def test_it_orders_peaks_fp32_below_tf32_below_16_bit_for_every_gpu(name: str) -> None:
    gpu = get_gpu(name)
    peaks = gpu.peak_flops
    assert peaks["fp32"] > 0
    assert peaks.get("tf32", peaks["fp32"]) >= peaks["fp32"]
    assert peaks["fp16"] >= peaks.get("tf32", peaks["fp32"])
    assert peaks.get("fp8", peaks["fp16"]) >= peaks["fp16"]
    assert gpu.source
    assert gpu.memory_bytes >= 16 * GIB


def test_it_has_no_bf16_or_fp8_on_cards_without_that_hardware() -> None:
    assert not get_gpu("V100-32GB").supports("bf16")
    assert not get_gpu("T4").supports("bf16")
    assert not get_gpu("A100-80GB").supports("fp8")
    assert get_gpu("H100-SXM").supports("fp8")


def test_it_raises_key_error_for_an_unknown_gpu_and_accepts_any_case() -> None:
    with pytest.raises(KeyError):
        get_gpu("Z100")
    assert get_gpu("a100-80gb") is GPUS["A100-80GB"]


def test_it_keeps_peak_flops_read_only() -> None:
    with pytest.raises(TypeError):
        get_gpu("T4").peak_flops["fp32"] = 1.0  # type: ignore[index]


def test_it_seeds_the_iteragpu_rtx_4090_lots_at_their_seed_prices() -> None:
    rtx = {p.duration_hours: p for p in RENTAL_PLANS if p.gpu == "RTX-4090"}
    assert {h: p.price for h, p in rtx.items()} == {
        72: Decimal("47.14"),
        168: Decimal("110.00"),
        720: Decimal("390.00"),
    }
    assert all(p.provider == "IteraGPU" and p.currency == "USD" for p in rtx.values())
    assert all(not p.illustrative for p in rtx.values())
    assert lot_cost(2, rtx[72].price) == Decimal("94.28")


def test_it_marks_the_two_gpu_b200_lot_as_an_illustrative_per_lot_price() -> None:
    (b200,) = [p for p in RENTAL_PLANS if p.gpu == "B200"]
    assert b200.gpus_per_lot == 2
    assert b200.illustrative and "Illustrative" in b200.note
    assert lot_cost(1, b200.price) == b200.price


def test_it_refers_only_to_catalogued_gpus_with_decimal_prices() -> None:
    for plan in RENTAL_PLANS:
        assert plan.gpu in GPUS
        assert isinstance(plan.price, Decimal) and plan.price > 0

"""Issue 31's pure rules: the chance of overrunning a lot, an interval's shape, the collectives'
algorithm by topology, valid tensor splits, measured GPU ratios (docs/domain.md §24.6,
§24.11-§24.13). No database."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from catalog.domain.catalog import get_gpu
from catalog.domain.links import INFINITY_FABRIC_3, NIC_200G, NVLINK4, LinkProfile
from estimates.domain.formulas.collectives import Group, collective_seconds
from estimates.domain.formulas.intervals import (
    BANDS,
    interval,
    overrun_probability,
    time_kind,
)
from estimates.domain.formulas.projection import speedup
from estimates.domain.formulas.serving import gpus_per_replica, tensor_split
from estimates.tests.published.memory import LLAMA33_70B, hf_qlora


def test_the_chance_of_overrunning_the_ranges_ends_is_a_tenth_and_the_centre_a_half() -> None:
    for kind, band in BANDS.items():
        found = interval(100.0, kind)
        centre = 100.0 * math.exp(band.mean)
        assert overrun_probability(100.0, kind, centre) == pytest.approx(0.5)
        # t(0.90) > z(0.90): the range's ends lie beyond the normal's 10% and 90%.
        assert overrun_probability(100.0, kind, found.high) < 0.1
        assert overrun_probability(100.0, kind, found.low) > 0.9


@given(
    estimate=st.floats(min_value=1e-6, max_value=1e9),
    limit=st.floats(min_value=-1e9, max_value=1e12),
    kind=st.sampled_from(sorted(BANDS)),
)
def test_the_chance_of_overrunning_is_a_probability_that_falls_as_the_lot_grows(
    estimate: float, limit: float, kind: str
) -> None:
    chance = overrun_probability(estimate, kind, limit)
    assert 0.0 <= chance <= 1.0
    assert overrun_probability(estimate, kind, max(limit, 0) * 2 + 1) <= chance + 1e-12


def test_a_pilot_across_nodes_and_a_projection_have_their_own_kinds() -> None:
    assert time_kind("pilot", 8, 8) == "time.pilot.one_node"
    assert time_kind("pilot", 16, 8) == "time.pilot.many_nodes"
    assert time_kind("projected", 8, 8, "measured") == "time.projected.measured"
    assert time_kind("projected", 8, 8, "roofline") == "time.projected.roofline"
    assert time_kind("assumed", 64, 8) == "time.assumed"
    # A caller's own utilization: the spread around it, not the default's offset.
    assert (
        interval(10.0, "time.assumed", centred=False).low
        < 10.0
        < interval(10.0, "time.assumed", centred=False).high
    )


def test_two_nodes_all_reduce_hierarchically_and_eight_mi300x_use_their_seven_links() -> None:
    a3_mega = LinkProfile(8, NVLINK4, NIC_200G)
    across = collective_seconds("all_reduce", 8 * 2**30, Group(16, 8), a3_mega)
    assert across is not None and across.algorithm == "hierarchical"
    # One rank per node: no node-level reduction, the whole buffer over each GPU's NIC.
    flat = collective_seconds("all_reduce", 2**30, Group(8, 1), a3_mega)
    assert flat is not None and flat.algorithm == "ring"
    mesh = LinkProfile(8, INFINITY_FABRIC_3, None)
    pair = collective_seconds("all_reduce", 2**30, Group(2, 2), mesh)
    node = collective_seconds("all_reduce", 2**30, Group(8, 8), mesh)
    assert pair is not None and node is not None
    # stas00: 47.671 GB/s busbw for 2 MI300X, 312.912 for 8 (1 link against 7).
    assert 2**30 * 1.0 / (pair.seconds - 40e-6) == pytest.approx(47.671e9, rel=1e-3)
    assert 2**30 * 1.75 / (node.seconds - 40e-6) == pytest.approx(312.912e9, rel=1e-3)
    # Without a node-to-node tier a multi-node collective is not counted (None), never free.
    assert collective_seconds("all_gather", 2**30, Group(16, 8), mesh) is None


def test_a_replica_is_served_only_in_a_tensor_split_the_heads_allow() -> None:
    # 232 heads admit no 5-, 6- or 7-way split: five GPUs of memory are served on eight.
    assert tensor_split(5, 232) == 8
    # 64 query heads and 8 key/value heads: 3 is refused, 4 divides both.
    assert gpus_per_replica(140 * 10**9, 20 * 2**30, 80 * 2**30, 64, 8) == 4
    # 8 key/value heads on a 16-way split are replicated: allowed.
    assert tensor_split(16, 64, 8) == 16
    assert tensor_split(7, 6) is None


def test_measured_pairs_carry_through_one_card_and_back() -> None:
    h100, a100 = get_gpu("H100-SXM"), get_gpu("A100-80GB")
    there = speedup(a100, h100, "bf16")
    back = speedup(h100, a100, "bf16")
    assert there.basis == back.basis == "measured"
    assert there.ratio * back.ratio == pytest.approx(1.0)
    chained = speedup(get_gpu("RTX-4090"), get_gpu("H200"), "bf16")
    assert chained.basis == "measured" and "through the H100-SXM" in chained.source
    assert speedup(get_gpu("L40S"), h100, "bf16").basis == "roofline"


def test_a_job_that_fits_only_at_the_estimate_says_it_does_not_fit_at_the_high_end() -> None:
    # unsloth's 70B QLoRA at 8,192 tokens: out of memory on 80 GB; the estimate is under 80 GiB,
    # the memory.quantized range's high end is not, and the words give that high end.
    found = hf_qlora(LLAMA33_70B, 8192, "H100-SXM")
    assert found.fits_at_estimate and not found.fits_in_memory
    headline = next(words for words in found.recommendations if words.startswith("Does not"))
    assert headline.startswith("Does not fit at the 80% range's high end: ")
    assert "at the estimate" in headline
    assert not any(words.endswith("still too much.") for words in found.recommendations)

"""One case of the published-figures table, and the helpers the cases share."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from estimates.domain.formulas import EstimateResult
from estimates.tests.test_finetuning import run

__all__ = ["DAY", "INTERVAL_KINDS", "LLM_FOUNDRY", "MPT", "Case", "per_gpu", "run"]

# The kinds an interval is derived for (docs/domain.md §24.12); "check" cases only hold.
INTERVAL_KINDS: Final = (
    "time.assumed",
    "time.pilot.one_node",
    "time.pilot.many_nodes",
    "time.projected.measured",
    "time.projected.roofline",
    "memory",
    "memory.quantized",
)


@dataclass(frozen=True)
class Case:
    """A published figure, the estimate of it, and how close it must be (relative)."""

    id: str
    kind: str
    source: str
    published: float
    estimate: Callable[[], float]
    tolerance: float
    why: str
    # A figure a constant of the formulas was read from: it holds by construction and is no
    # out-of-sample residual.
    anchor: bool = False
    # A throughput (tokens/s): the time it implies is its inverse.
    rate: bool = False

    def residual(self) -> float:
        """ln(published / estimated) of the quantity the interval bounds (time or bytes)."""
        ratio = self.published / self.estimate()
        return math.log(1.0 / ratio if self.rate else ratio)


def per_gpu(result: EstimateResult, gpus: int) -> float:
    """The run's training throughput in tokens per second per GPU."""
    return result.tokens / (result.training_wall_hours * 3600) / gpus


DAY: Final = 24.0
LLM_FOUNDRY: Final = (
    "MosaicML llm-foundry, scripts/train/benchmarking/README.md (MPT training benchmarks: "
    "https://github.com/mosaicml/llm-foundry/tree/main/scripts/train/benchmarking)"
)
# MPT shapes (llm-foundry scripts/train/yamls/pretrain/mpt-*.yaml): vocabulary 50,368, MLP 4h;
# parameters as the benchmark table counts them at 2,048 tokens.
MPT: Final = {
    "760m": {"parameters": 760_470_528, "layers": 24, "hidden_size": 1536, "attention_heads": 12},
    "1b": {"parameters": 1_315_950_592, "layers": 24, "hidden_size": 2048, "attention_heads": 16},
    "3b": {"parameters": 2_651_837_440, "layers": 32, "hidden_size": 2560, "attention_heads": 20},
    "7b": {"parameters": 6_658_859_008, "layers": 32, "hidden_size": 4096, "attention_heads": 32},
    "13b": {"parameters": 12_853_954_560, "layers": 40, "hidden_size": 5120, "attention_heads": 40},
    "30b": {"parameters": 29_975_214_080, "layers": 48, "hidden_size": 7168, "attention_heads": 56},
}
for _shape in MPT.values():
    _shape["vocab_size"] = 50_368

"""Where each parallel group's ranks sit: tensor groups inside a node first, then context,
expert and data-parallel ranks, then pipeline stages (Megatron's order tp-cp-ep-dp-pp).

Rules (docs/domain.md §24.6): a group's ranks are spaced by the product of the groups placed
before it, so a node of g GPUs holds min(size, g / stride) of them (at least one).
``hardware.expert_parallel_placement`` "across_nodes" puts one expert rank per node instead.
Units: GPU counts.
"""

from __future__ import annotations

from dataclasses import dataclass

from estimates.domain.formulas.collectives import Group
from estimates.domain.formulas.specs import EstimateInput


@dataclass(frozen=True)
class Layout:
    """The job's parallel degrees on ``gpus`` GPUs in nodes of ``per_node``."""

    gpus: int
    per_node: int
    tensor: int
    pipeline: int
    context: int
    expert: int
    experts_across_nodes: bool = False

    @property
    def data(self) -> int:
        """Ranks that hold the same model shard: GPUs / (tensor x pipeline) (ZeRO shards over
        them; context and expert ranks are among them)."""
        return max(1, self.gpus // (self.tensor * self.pipeline))

    def _placed(self, size: int, stride: int) -> Group:
        in_node = max(1, self.per_node // stride) if stride < self.per_node else 1
        return Group(size, max(1, min(size, in_node)))

    @property
    def tensor_group(self) -> Group:
        return Group(self.tensor, min(self.tensor, self.per_node))

    @property
    def context_group(self) -> Group:
        return self._placed(self.context, self.tensor)

    @property
    def expert_group(self) -> Group:
        if self.experts_across_nodes:
            return Group(self.expert, 1)
        return self._placed(self.expert, self.tensor * self.context)

    @property
    def data_group(self) -> Group:
        return self._placed(self.data, self.tensor)

    @property
    def expert_data_group(self) -> Group:
        """The ranks holding the same experts: data / expert, spaced past the expert group."""
        stride = self.tensor * self.context * self.expert
        return self._placed(max(1, self.data // self.expert), stride)

    @property
    def pipeline_neighbours(self) -> Group:
        """Two adjacent stages: in one node when a stage's ranks leave room for the next."""
        stage = self.tensor * self.data
        return Group(2, 2 if 2 * stage <= self.per_node else 1)

    @property
    def crosses_nodes(self) -> bool:
        return self.gpus > self.per_node


def job_layout(inp: EstimateInput, gpus: int, per_node: int) -> Layout:
    hardware = inp.hardware
    return Layout(
        gpus=gpus,
        per_node=per_node,
        tensor=hardware.tensor_parallel,
        pipeline=hardware.pipeline_parallel,
        context=hardware.context_parallel,
        expert=hardware.expert_parallel,
        experts_across_nodes=hardware.expert_parallel_placement == "across_nodes",
    )

"""The stateless calculator on a planned item (docs/domain.md §10, §24.9): when the item's
config or its estimate spec describes a model, the memory fit and the hours at the assumed
utilization, advisory beside the planned and pilot hours (they feed the plan's warnings, §7.8).
Pure: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from catalog.domain.catalog import GpuModel
from catalog.domain.gpu_names import normalize_gpu
from estimates.domain import formulas
from estimates.domain.forecast_inputs import ItemInput, PilotInput, h


def _estimate_input_pilot(sample: PilotInput | None) -> formulas.PilotSpec | None:
    if sample is None:
        return None
    return formulas.PilotSpec(
        tokens_per_second=sample.tokens_per_second,
        samples_per_second=None if sample.tokens_per_second else sample.samples_per_second,
        gpus=sample.gpus,
    )


def _estimate_input(
    cfg: Mapping[str, Any], gpu: GpuModel, sample: PilotInput | None
) -> formulas.EstimateInput:
    pilot = _estimate_input_pilot(sample)
    return formulas.EstimateInput(
        model=formulas.ModelSpec(
            parameters=cfg["parameters"],
            layers=cfg.get("layers"),
            hidden_size=cfg.get("hidden_size"),
            attention_heads=cfg.get("attention_heads"),
            vocab_size=cfg.get("vocab_size"),
        ),
        training=formulas.TrainingSpec(
            tokens=cfg.get("tokens"),
            samples=cfg.get("samples"),
            tokens_per_sample=cfg.get("tokens_per_sample"),
            epochs=cfg.get("epochs", 1.0),
            sequence_length=cfg.get("sequence_length", 2048),
            micro_batch_size=cfg.get("micro_batch_size", 1),
            precision=cfg.get("precision", "bf16"),
            optimizer=cfg.get("optimizer", "adamw"),
            activation_checkpointing=bool(cfg.get("activation_checkpointing", False)),
            flash_attention=bool(cfg.get("flash_attention", False)),
        ),
        hardware=formulas.HardwareSpec(
            gpu=gpu,
            count=cfg.get("gpus", 1),
            utilization=cfg.get("utilization", 0.4),
            zero_stage=cfg.get("zero_stage", 0),
            tensor_parallel=cfg.get("tensor_parallel", 1),
            pipeline_parallel=cfg.get("pipeline_parallel", 1),
        ),
        pilot=pilot,
    )


def calculator(
    item: ItemInput, gpus: Mapping[str, GpuModel], sample: PilotInput | None
) -> tuple[dict[str, Any] | None, str]:
    """The stateless calculator applied to the item's config, when it describes a model.

    Only with `parameters` in the config; it is advisory (memory fit, assumed time) and never
    replaces the planned or pilot hours.
    """
    cfg = item.config
    spec = item.estimate_spec
    if (spec is None and "parameters" not in cfg) or not item.gpu:
        return None, ""
    gpu = gpus.get(normalize_gpu(item.gpu))
    if gpu is None:
        return None, f"the calculator skipped it: GPU {item.gpu!r} is not in the catalog"
    try:
        # h17 (docs/domain.md §24.9): the item's estimate_spec is the input when it has one.
        inp = (
            _estimate_input(cfg, gpu, sample)
            if spec is None
            else formulas.input_from_spec(spec, gpu, _estimate_input_pilot(sample), work=cfg)
        )
        result = formulas.estimate(inp)
    except (formulas.EstimateInputError, TypeError, ValueError) as exc:
        # Free-form config: a value of the wrong type is the planner's to fix, not a failure.
        return None, f"the calculator could not use its config ({exc})"
    return {
        "time_source": result.time_source,
        "training_flops": result.training_flops,
        "wall_hours": h(result.wall_hours),
        "gpu_hours": h(result.gpu_hours),
        "memory_per_device_bytes": result.memory.total,
        "device_memory_bytes": result.device_memory_bytes,
        "fits_in_memory": result.fits_in_memory,
        "first_recommendation": result.recommendations[0] if result.recommendations else "",
    }, ""

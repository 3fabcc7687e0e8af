"""A pilot's throughput read from what its loop logged (docs/domain.md §10.7, docs/mlflow.md).
Pure: no Django, no I/O.

Rule: when a pilot run ends without a throughput of its own (`POST …/throughput/`, the client's
`run.throughput()`), its throughput is read from its metrics, each quantity (tokens per second,
samples per second) from the first source that has it:

1. what the library measured for the whole job, over the run's GPUs: the Hugging Face
   Trainer's `train_tokens_per_second` / `train_samples_per_second`, Lightning's
   ThroughputMonitor `train/tokens_per_sec` or `train/items_per_sec` (items are the lengths its
   `length_fn` counts: tokens) / `train/samples_per_sec` (logged with more than one device);
2. what the library measured per device, × the run's GPUs: Lightning's
   `train/device/tokens_per_sec`, `train/device/items_per_sec`, `train/device/samples_per_sec`;
3. tokens only: the steps the loop logged over their times (the metric logged most often:
   its first and last step and when they were logged, the client's timestamps when it sent
   them) × the tokens per step stated for the run (a `tokens_per_step` param of the run, else
   of its item's config).

The latest value of each metric counts (the libraries log running or whole-run figures). The
measured seconds are the library's own (`train_runtime`, `train/time`), else the steps' span,
else the run's wall time. Nothing found: no throughput (the item stays without a pilot).
Units: per second, over `gpus` GPUs; seconds float.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

WHOLE_TOKENS: Final = ("train_tokens_per_second", "train/tokens_per_sec", "train/items_per_sec")
WHOLE_SAMPLES: Final = ("train_samples_per_second", "train/samples_per_sec")
DEVICE_TOKENS: Final = ("train/device/tokens_per_sec", "train/device/items_per_sec")
DEVICE_SAMPLES: Final = ("train/device/samples_per_sec",)
RUNTIMES: Final = ("train_runtime", "train/time")
NAMES: Final = frozenset(WHOLE_TOKENS + WHOLE_SAMPLES + DEVICE_TOKENS + DEVICE_SAMPLES + RUNTIMES)


@dataclass(frozen=True)
class StepSpan:
    """A metric's first and last logged step and the seconds between their logging."""

    first_step: int
    last_step: int
    seconds: float

    @property
    def steps_per_second(self) -> float | None:
        steps = self.last_step - self.first_step
        return steps / self.seconds if steps > 0 and self.seconds > 0 else None


@dataclass(frozen=True)
class Throughput:
    tokens_per_second: float | None
    samples_per_second: float | None
    gpus: int
    measured_seconds: float | None
    source: str


def _positive(value: float | None) -> float | None:
    # NaN fails both comparisons; ±inf fails the second.
    return value if value is not None and 0 < value < float("inf") else None


def _first(latest: Mapping[str, float], names: tuple[str, ...], scale: int) -> tuple[float, str]:
    for name in names:
        value = _positive(latest.get(name))
        scaled = _positive(value * scale) if value is not None else None
        if scaled is not None:
            return scaled, name
    return 0.0, ""


def _measured(
    latest: Mapping[str, float], whole: tuple[str, ...], device: tuple[str, ...], gpus: int
) -> tuple[float, str]:
    """Sources 1 and 2: the whole job's figure, else the per-device one × the GPUs."""
    found = _first(latest, whole, 1)
    return found if found[0] else _first(latest, device, gpus)


def _stepped(span: StepSpan | None, tokens_per_step: float | None) -> float | None:
    """Source 3: the logged steps per second × the stated tokens per step."""
    rate = span.steps_per_second if span is not None else None
    per_step = _positive(tokens_per_step)
    return _positive(rate * per_step) if rate is not None and per_step is not None else None


def _seconds(
    latest: Mapping[str, float], span: StepSpan | None, wall_seconds: float | None
) -> float | None:
    """The library's runtime, else the steps' span, else the run's wall time."""
    runtime, _ = _first(latest, RUNTIMES, 1)
    if runtime:
        return runtime
    if span is not None and span.seconds > 0:
        return span.seconds
    return _positive(wall_seconds)


def from_metrics(
    latest: Mapping[str, float],
    *,
    gpus: int,
    span: StepSpan | None = None,
    tokens_per_step: float | None = None,
    wall_seconds: float | None = None,
) -> Throughput | None:
    """The run's throughput over its `gpus` GPUs by the rule above; None when nothing says."""
    gpus = max(gpus, 1)
    tokens, token_name = _measured(latest, WHOLE_TOKENS, DEVICE_TOKENS, gpus)
    samples, sample_name = _measured(latest, WHOLE_SAMPLES, DEVICE_SAMPLES, gpus)
    stepped = _stepped(span, tokens_per_step)
    if not tokens and stepped is not None:
        tokens, token_name = stepped, "logged steps × tokens_per_step"
    if not tokens and not samples:
        return None
    return Throughput(
        tokens_per_second=tokens or None,
        samples_per_second=samples or None,
        gpus=gpus,
        measured_seconds=_seconds(latest, span, wall_seconds),
        source=", ".join(name for name in (token_name, sample_name) if name),
    )

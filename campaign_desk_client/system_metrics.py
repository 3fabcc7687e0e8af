"""GPU system metrics from NVML, logged with the run's own points (docs/client.md).

NVML comes from ``nvidia-ml-py`` (the client's ``nvml`` extra; it installs the ``pynvml``
module). Where it is absent, or no NVIDIA driver answers, nothing is sampled and nothing is
logged. A background thread reads every GPU each ``interval`` seconds; the samples wait in a
queue and go out with the run's next batch (the training loop's thread sends them, so no request
ever runs beside it). Names are MLflow's system metrics' names, so a run logged either way charts
the same:

- ``system/gpu_{i}_utilization_percentage``: the GPU's busy share over the sample, percent;
- ``system/gpu_{i}_memory_usage_megabytes``: memory used, MB (10^6 bytes);
- ``system/gpu_{i}_power_usage_watts``: power drawn, W.

Each sample's step is its number (0, 1, 2, …), as MLflow's system metrics count them.
"""

from __future__ import annotations

import importlib
import threading
from collections import deque
from typing import Any

from .wire import log

DEFAULT_INTERVAL = 10.0
MIN_INTERVAL = 1.0


def load_nvml() -> Any | None:
    """The ``pynvml`` module, initialised; None without it or without a driver."""
    try:
        nvml = importlib.import_module("pynvml")
        nvml.nvmlInit()
    except Exception as exc:  # no module, no driver, no GPU: nothing to sample
        log.debug("no NVML: %s", exc)
        return None
    return nvml


def read_gpus(nvml: Any) -> dict[str, float]:
    """One sample of every GPU: utilisation, memory used and power, by metric name. A figure a
    GPU does not report (power on some boards) is left out."""
    sample: dict[str, float] = {}
    for i in range(nvml.nvmlDeviceGetCount()):
        handle = nvml.nvmlDeviceGetHandleByIndex(i)
        for name in READINGS:
            try:
                sample[f"system/gpu_{i}_{name}"] = _reading(nvml, handle, name)
            except nvml.NVMLError as exc:
                log.debug("GPU %d: no %s: %s", i, name, exc)
    return sample


READINGS = ("utilization_percentage", "memory_usage_megabytes", "power_usage_watts")


def _reading(nvml: Any, handle: Any, name: str) -> float:
    if name == "utilization_percentage":
        return float(nvml.nvmlDeviceGetUtilizationRates(handle).gpu)
    if name == "memory_usage_megabytes":
        return float(nvml.nvmlDeviceGetMemoryInfo(handle).used) / 1e6
    return float(nvml.nvmlDeviceGetPowerUsage(handle)) / 1000  # milliwatts


class GpuSampler:
    """Samples the GPUs every ``interval`` seconds on a daemon thread until ``close()`` (or the
    run finishes); ``drain()`` hands the waiting samples over as metric points."""

    def __init__(self, nvml: Any, interval: float = DEFAULT_INTERVAL) -> None:
        self.nvml = nvml
        self.interval = max(float(interval), MIN_INTERVAL)
        self.samples = 0
        self._waiting: deque[dict[str, Any]] = deque(maxlen=100_000)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="cdesk-gpu-sampler", daemon=True)

    def start(self) -> GpuSampler:
        self.sample()  # the first at once: a short run still has one
        self._thread.start()
        return self

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.sample()

    def sample(self) -> None:
        try:
            found = read_gpus(self.nvml)
        except Exception as exc:  # a driver gone mid-run must not end the training loop
            log.warning("GPU sample failed: %s", exc)
            return
        step = self.samples
        self.samples += 1
        for name, value in found.items():
            self._waiting.append({"name": name, "step": step, "value": value})

    def drain(self) -> list[dict[str, Any]]:
        points = []
        while self._waiting:
            points.append(self._waiting.popleft())
        return points

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=self.interval + 1)
        try:
            self.nvml.nvmlShutdown()
        except Exception as exc:
            log.debug("NVML shutdown: %s", exc)


def sample_gpus(run: Any, interval: float = DEFAULT_INTERVAL) -> GpuSampler | None:
    """Start sampling the GPUs into ``run`` (a ``Run``); None where NVML is absent."""
    nvml = load_nvml()
    if nvml is None:
        return None
    sampler = GpuSampler(nvml, interval).start()
    run.samplers.append(sampler)
    return sampler

"""A test double of nvidia-ml-py's ``pynvml`` module: the same names and shapes as the real one
(``nvmlInit``, ``nvmlDeviceGetCount``, ``nvmlDeviceGetHandleByIndex``,
``nvmlDeviceGetUtilizationRates(h).gpu``, ``nvmlDeviceGetMemoryInfo(h).used`` in bytes,
``nvmlDeviceGetPowerUsage(h)`` in milliwatts, ``NVMLError``), for machines without a GPU. It is
loaded the way the real one is: this directory first on ``sys.path`` (or ``PYTHONPATH`` for a
subprocess), then ``import pynvml``.

The GPUs it reports are ``GPUS`` (set by a test), else the JSON list in ``FAKE_NVML_GPUS``, else
one busy GPU. Each entry: ``utilization`` (percent), ``memory_used`` (bytes), ``memory_total``,
``power_mw`` (None: the board reports no power, NVMLError as on such boards).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

FAKE = True
GPUS: list[dict[str, Any]] | None = None
_initialised = 0


class NVMLError(Exception):
    pass


class NVMLError_Uninitialized(NVMLError):
    pass


class NVMLError_NotSupported(NVMLError):
    pass


@dataclass
class c_nvmlUtilization_t:
    gpu: int
    memory: int


@dataclass
class c_nvmlMemory_t:
    total: int
    free: int
    used: int


def _gpus() -> list[dict[str, Any]]:
    if GPUS is not None:
        return GPUS
    given = os.environ.get("FAKE_NVML_GPUS")
    if given:
        return list(json.loads(given))
    return [{"utilization": 87, "memory_used": 20_000_000_000, "power_mw": 310_000}]


def _check() -> None:
    if not _initialised:
        raise NVMLError_Uninitialized("nvmlInit() was not called")


def nvmlInit() -> None:
    global _initialised
    _initialised += 1


def nvmlShutdown() -> None:
    global _initialised
    _check()
    _initialised -= 1


def nvmlDeviceGetCount() -> int:
    _check()
    return len(_gpus())


def nvmlDeviceGetHandleByIndex(index: int) -> int:
    _check()
    if not 0 <= index < len(_gpus()):
        raise NVMLError(f"invalid argument: GPU {index}")
    return index


def nvmlDeviceGetUtilizationRates(handle: int) -> c_nvmlUtilization_t:
    _check()
    return c_nvmlUtilization_t(gpu=int(_gpus()[handle]["utilization"]), memory=0)


def nvmlDeviceGetMemoryInfo(handle: int) -> c_nvmlMemory_t:
    _check()
    gpu = _gpus()[handle]
    total = int(gpu.get("memory_total", 24_000_000_000))
    used = int(gpu["memory_used"])
    return c_nvmlMemory_t(total=total, free=total - used, used=used)


def nvmlDeviceGetPowerUsage(handle: int) -> int:
    _check()
    power = _gpus()[handle].get("power_mw")
    if power is None:
        raise NVMLError_NotSupported("Not Supported")
    return int(power)


def nvmlDeviceGetEnforcedPowerLimit(handle: int) -> int:
    _check()
    return int(_gpus()[handle].get("power_limit_mw", 450_000))


def nvmlDeviceGetName(handle: int) -> str:
    _check()
    return str(_gpus()[handle].get("name", "NVIDIA GeForce RTX 4090"))

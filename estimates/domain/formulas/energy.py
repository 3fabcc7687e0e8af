"""Energy and emissions of a training run.

Rule: GPU kWh = GPU-hours x board power / 1000; facility kWh = x PUE; CO2e = facility kWh x grid
factor (Touvron et al. 2023, LLaMA section 6.2).
Units: kWh, kg CO2e.
"""

from __future__ import annotations

from dataclasses import dataclass

from estimates.domain.formulas.checks import non_negative, positive


@dataclass(frozen=True)
class Energy:
    """GPU energy, facility energy (x PUE) and emissions."""

    gpu_kwh: float
    facility_kwh: float
    kg_co2e: float


def energy_use(gpu_hours: float, tdp_watts: float, pue: float, kg_co2_per_kwh: float) -> Energy:
    """GPU kWh = GPU-hours x TDP / 1000; facility kWh = x PUE; CO2e = facility kWh x grid factor.

    Source: Touvron et al. (2023), "LLaMA", section 6.2 and table 15: MWh = GPU-h x GPU power
    x PUE (A100-80GB at 400 W, PUE 1.1), tCO2eq = MWh x 0.385. LLaMA-7B: 82,432 GPU-hours,
    36 MWh, 14 tCO2eq. Counts the GPUs at board power only (no CPUs, network or idle time).
    """
    gpu_kwh = non_negative(gpu_hours, "gpu_hours") * positive(tdp_watts, "tdp_watts") / 1000.0
    facility = gpu_kwh * positive(pue, "pue")
    return Energy(gpu_kwh, facility, facility * non_negative(kg_co2_per_kwh, "kg_co2_per_kwh"))

"""POST /estimates/hardware-options/: the job on every catalog GPU (and a custom one), priced and
ranked (estimates.domain.hardware_options; docs/api.md, docs/domain.md §24.8, §24.11)."""

from __future__ import annotations

from typing import Any

from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from catalog.domain import catalog
from catalog.models import GpuModel, RentalPlan
from estimates.api.calculator import SignedInPerson, calculator_schema, field_error, hardware_spec
from estimates.api.serializers import (
    HardwareOptionsRequestSerializer,
    HardwareOptionsSerializer,
    estimate_input,
    options_json,
)
from estimates.domain import formulas
from estimates.domain import hardware_options as options
from estimates.domain.formulas.projection import speedup, training_intensity
from estimates.models import plan_offer
from estimates.selectors.hardware_options import published_rate_offers


class HardwareOptionsView(APIView):
    """Which GPU and which plan is cheapest for this job (estimates.domain.hardware_options;
    docs/api.md)."""

    permission_classes = [SignedInPerson]

    @calculator_schema(
        HardwareOptionsRequestSerializer,
        HardwareOptionsSerializer,
        "Every catalog GPU (and custom accelerator) that fits the job, ranked by cost",
    )
    def post(self, request: Request) -> Response:
        body = HardwareOptionsRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = dict(body.validated_data)
        own = hardware_spec(data["hardware"])
        candidates = [row.as_spec() for row in GpuModel.objects.order_by("name")]
        if "custom" in data["hardware"]:
            candidates.append(own)
        pilot = data.get("pilot")
        pilot_gpu = own
        if pilot and pilot.get("gpu"):
            pilot_gpu = hardware_spec({"gpu": pilot["gpu"]}, field="pilot.gpu")
        if pilot and all(c.name != pilot_gpu.name for c in candidates):
            candidates.append(pilot_gpu)  # the GPU the pilot ran on is always an option
        precision = data["training"]["precision"]
        try:
            measured = None
            if pilot:
                measured = formulas.estimate(estimate_input(data, pilot_gpu))
                if measured.mfu > 1:
                    raise formulas.EstimateInputError(
                        "pilot.tokens_per_second",
                        f"implies {100 * measured.mfu:.0f}% of the {pilot_gpu.name}'s peak, "
                        "which is impossible",
                    )
            works, excluded = [], []
            for candidate in candidates:
                work, reason = _option_work(data, candidate, pilot_gpu, measured, precision)
                if work is None:
                    excluded.append(options.Excluded(candidate.name, reason))
                else:
                    works.append((work, candidate))
        except formulas.EstimateInputError as error:
            raise field_error(error) from None
        cost = data.get("cost") or {}
        offers = [plan_offer(p) for p in RentalPlan.objects.select_related("gpu")]
        currency = cost.get("currency", "USD")
        offers = [o for o in offers if o.currency == currency]
        # The caller's rates first; without a rate of the caller's own, the catalog's published
        # hourly rates by instance size, with their provenance (docs/domain.md §24.8).
        published = [] if cost.get("hourly_rate_per_gpu") else published_rate_offers(currency)
        rates = dict(data.get("rates") or {})
        ranked: list[options.HardwareOption] = []
        for work, candidate in works:
            found, _ = options.rank_options(
                [work],
                [candidate],
                offers=offers,
                rates=rates,
                rate_offers=published,
                fallback_rate=cost.get("hourly_rate_per_gpu"),
                currency=currency,
                window_hours=data.get("window_hours"),
                measured_on={work.key: pilot_gpu.name} if pilot else None,
            )
            ranked.extend(found)
        ranked.sort(key=options.ranking)
        return Response(options_json(ranked, excluded))


def _option_work(
    data: dict[str, Any],
    candidate: catalog.GpuModel,
    pilot_gpu: catalog.GpuModel,
    measured: formulas.EstimateResult | None,
    precision: str,
) -> tuple[options.Work | None, str]:
    """The job on ``candidate``: from the pilot where it ran, else the pilot carried to this GPU
    by a measured ratio or the roofline ("projected", docs/domain.md §24.11), else the assumed
    utilization; None with the reason when the GPU lacks the precision or the memory."""
    if not candidate.supports(precision):
        return None, f"no {precision} peak"
    changed = dict(data)
    source: options.TimeSource = "assumed"
    if measured is not None:
        if candidate.name == pilot_gpu.name:
            source = "pilot"
        else:
            changed["pilot"] = None
            changed["hardware"] = {
                **data["hardware"],
                "utilization": _carried_utilization(data, measured, pilot_gpu, candidate),
                "utilization_kind": "mfu",
            }
            source = "projected"
    result = formulas.estimate(estimate_input(changed, candidate))
    ran_here = measured is not None and candidate.name == pilot_gpu.name
    if not result.fits_in_memory and not ran_here:  # a pilot ran there: it fits
        return None, (
            f"needs {result.memory.total / 2**30:,.1f} GiB per device, has "
            f"{candidate.memory_bytes / 2**30:,.1f} GiB"
        )
    work = options.Work(
        key="job",
        name="the job",
        gpu=candidate.name,
        wall_hours=result.wall_hours,
        gpus=data["hardware"]["count"],
        precision=precision,
        memory_bytes_per_gpu=result.memory.total,
        time_source=source,
    )
    return work, ""


def _carried_utilization(
    data: dict[str, Any],
    measured: formulas.EstimateResult,
    own: catalog.GpuModel,
    candidate: catalog.GpuModel,
) -> float:
    """The candidate's MFU: the pilot's, its own communication taken out (the candidate's is
    counted on its links), times the speed-up over the peaks' ratio."""
    precision = data["training"]["precision"]
    comm = measured.communication
    efficiency = comm.scaling_efficiency if comm is not None else 1.0
    flops_per_token = measured.executed_flops / measured.tokens if measured.tokens else 0.0
    intensity = training_intensity(estimate_input(data, own), measured.memory, flops_per_token)
    ratio = speedup(own, candidate, precision, intensity).ratio
    peaks = own.peak_flops[precision] / candidate.peak_flops[precision]
    return min(max(measured.mfu / efficiency * ratio * peaks, 0.001), 1.0)

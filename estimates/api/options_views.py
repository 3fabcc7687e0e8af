"""POST /estimates/hardware-options/: the job on every catalog GPU (and a custom one), priced and
ranked (docs/api.md, docs/domain.md §24.8, §24.11): parsed here, ranked by
`estimates.selectors.hardware_options.job_hardware_options` (the campaign page's ranking too),
answered here."""

from __future__ import annotations

from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from estimates.api.calculator import SignedInPerson, calculator_schema, field_error, hardware_spec
from estimates.api.serializers import (
    HardwareOptionsRequestSerializer,
    HardwareOptionsSerializer,
    estimate_input,
    options_json,
)
from estimates.domain import formulas
from estimates.selectors.hardware_options import job_hardware_options


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
        pilot = data.get("pilot")
        pilot_gpu = own
        if pilot and pilot.get("gpu"):
            pilot_gpu = hardware_spec({"gpu": pilot["gpu"]}, field="pilot.gpu")
        try:
            ranked, excluded = job_hardware_options(
                data, own=own, pilot_gpu=pilot_gpu, inputs=estimate_input
            )
        except formulas.EstimateInputError as error:
            raise field_error(error) from None
        return Response(options_json(ranked, excluded))

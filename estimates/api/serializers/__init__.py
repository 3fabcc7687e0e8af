"""Serializers of the estimates API, one module per input group (docs/architecture.md §2):
``base`` (the strict serializer, the one range-checked number field ``ranged``, money), ``model``,
``training`` (with pilot and overheads), ``fine_tuning`` (the adapter), ``hardware``,
``cost_and_reliability``, ``preview`` (the request composed, the item's spec, the answer),
``compute_optimal``, ``serving``, ``hardware_options``, ``catalog`` and ``forecast``.
Re-exported here, so ``from estimates.api.serializers import …`` keeps working.
"""

from __future__ import annotations

from estimates.api.serializers.base import (
    CURRENCY,
    MoneySerializer,
    StrictSerializer,
    StrictSerializerSchema,
    money_json,
    ranged,
)
from estimates.api.serializers.catalog import (
    GpuModelSerializer,
    HourlyRateSerializer,
    RentalPlanSerializer,
)
from estimates.api.serializers.compute_optimal import (
    BudgetAnswerSerializer,
    BudgetSerializer,
    ComputeOptimalRequestSerializer,
    ComputeOptimalSerializer,
    ScalingLeverSerializer,
)
from estimates.api.serializers.cost_and_reliability import (
    CostSpecSerializer,
    EnergySpecSerializer,
    InterruptionsSerializer,
    ReliabilitySpecSerializer,
)
from estimates.api.serializers.fine_tuning import (
    LoraSerializer,
    TargetModulesField,
)
from estimates.api.serializers.forecast import (
    ForecastItemSerializer,
    ForecastSerializer,
    ForecastTotalsSerializer,
)
from estimates.api.serializers.hardware import (
    CustomHardwareSerializer,
    HardwareSpecSerializer,
    PeakFlopsSerializer,
)
from estimates.api.serializers.hardware_options import (
    ExcludedSerializer,
    HardwareOptionSerializer,
    HardwareOptionsRequestSerializer,
    HardwareOptionsSerializer,
    OptionPilotSerializer,
    PlanChoiceSerializer,
    option_json,
    options_json,
)
from estimates.api.serializers.model import (
    ModelSpecSerializer,
)
from estimates.api.serializers.preview import (
    CheckpointingSerializer,
    CheckpointSizeSerializer,
    CommunicationSerializer,
    DeepSpeedSerializer,
    EnergySerializer,
    EstimatePreviewSerializer,
    EstimateResultSerializer,
    EstimateSpecSerializer,
    GpuSummarySerializer,
    LeverSerializer,
    MemorySerializer,
    check_estimate_spec,
    estimate_input,
    result_json,
)
from estimates.api.serializers.serving import (
    LocalHardwareSerializer,
    LocalServingSerializer,
    ServingModelSerializer,
    ServingReplicaSerializer,
    ServingRequestSerializer,
    ServingSerializer,
)
from estimates.api.serializers.training import (
    OverheadsSerializer,
    PilotSpecSerializer,
    TrainingSpecSerializer,
)

__all__ = [
    "CURRENCY",
    "BudgetAnswerSerializer",
    "BudgetSerializer",
    "CheckpointSizeSerializer",
    "CheckpointingSerializer",
    "CommunicationSerializer",
    "ComputeOptimalRequestSerializer",
    "ComputeOptimalSerializer",
    "CostSpecSerializer",
    "CustomHardwareSerializer",
    "DeepSpeedSerializer",
    "EnergySerializer",
    "EnergySpecSerializer",
    "EstimatePreviewSerializer",
    "EstimateResultSerializer",
    "EstimateSpecSerializer",
    "ExcludedSerializer",
    "ForecastItemSerializer",
    "ForecastSerializer",
    "ForecastTotalsSerializer",
    "GpuModelSerializer",
    "GpuSummarySerializer",
    "HardwareOptionSerializer",
    "HardwareOptionsRequestSerializer",
    "HardwareOptionsSerializer",
    "HardwareSpecSerializer",
    "HourlyRateSerializer",
    "InterruptionsSerializer",
    "LeverSerializer",
    "LocalHardwareSerializer",
    "LocalServingSerializer",
    "LoraSerializer",
    "MemorySerializer",
    "ModelSpecSerializer",
    "MoneySerializer",
    "OptionPilotSerializer",
    "OverheadsSerializer",
    "PeakFlopsSerializer",
    "PilotSpecSerializer",
    "PlanChoiceSerializer",
    "ReliabilitySpecSerializer",
    "RentalPlanSerializer",
    "ScalingLeverSerializer",
    "ServingModelSerializer",
    "ServingReplicaSerializer",
    "ServingRequestSerializer",
    "ServingSerializer",
    "StrictSerializer",
    "StrictSerializerSchema",
    "TargetModulesField",
    "TrainingSpecSerializer",
    "check_estimate_spec",
    "estimate_input",
    "money_json",
    "option_json",
    "options_json",
    "ranged",
    "result_json",
]

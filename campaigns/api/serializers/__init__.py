"""Serializers of the campaigns API, one module per concept (docs/architecture.md §2): ``base``
(the columns' integer bounds and ``scope``, which narrows a related field to the campaign at
hand; the field classes are in ``campaigns.api.fields``), ``campaign`` (with commit and close),
``item``, ``stage``, ``stop_rule``, ``decision``, ``run``, ``stop`` (a run's stop as answers show
it), ``throughput``, ``checkpoint`` and ``metrics`` (the fast path's OpenAPI description and the
series read back). Every one lists its fields. Re-exported here, so
``from campaigns.api.serializers import …`` keeps working.
"""

from __future__ import annotations

from campaigns.api.serializers.base import (
    BIGINT_MAX,
    INT_MAX,
    scope,
)
from campaigns.api.serializers.campaign import (
    CampaignCorpusSerializer,
    CampaignDetailSerializer,
    CampaignSerializer,
    CloseCampaignSerializer,
    ClosingRefusedSerializer,
    CommitCampaignSerializer,
    CommittedSerializer,
    InheritedUncertaintySerializer,
    PlanFiguresSerializer,
    WritableTeamField,
)
from campaigns.api.serializers.checkpoint import (
    CheckpointSerializer,
)
from campaigns.api.serializers.decision import (
    DecisionSerializer,
)
from campaigns.api.serializers.item import (
    PlannedItemSerializer,
)
from campaigns.api.serializers.metrics import (
    MAX_POINTS,
    MetricBatchDocSerializer,
    MetricNameCountSerializer,
    MetricNamesSerializer,
    MetricPointDocSerializer,
    MetricsAcceptedSerializer,
    MetricSeriesSerializer,
    SeriesPointSerializer,
)
from campaigns.api.serializers.run import (
    RUN_ID_PATTERN,
    CorrectHoursSerializer,
    CostSoFarSerializer,
    FinishRunSerializer,
    HeartbeatAnswerSerializer,
    HeartbeatSerializer,
    LatestFiguresSerializer,
    LatestMetricSerializer,
    RunArtifactSerializer,
    RunCreateSerializer,
    RunDetailSerializer,
    RunSegmentSerializer,
    RunSerializer,
    run_id_is_valid,
)
from campaigns.api.serializers.stage import (
    ObservedFigures,
    StageSerializer,
)
from campaigns.api.serializers.stop import (
    RunRefusedSerializer,
    StopInfoSerializer,
    StopRunSerializer,
    stop_info,
)
from campaigns.api.serializers.stop_rule import (
    StopRuleSerializer,
)
from campaigns.api.serializers.throughput import (
    ThroughputSerializer,
)

__all__ = [
    "BIGINT_MAX",
    "INT_MAX",
    "MAX_POINTS",
    "RUN_ID_PATTERN",
    "CampaignCorpusSerializer",
    "CampaignDetailSerializer",
    "CampaignSerializer",
    "CheckpointSerializer",
    "CloseCampaignSerializer",
    "ClosingRefusedSerializer",
    "CommitCampaignSerializer",
    "CommittedSerializer",
    "CorrectHoursSerializer",
    "CostSoFarSerializer",
    "DecisionSerializer",
    "FinishRunSerializer",
    "HeartbeatAnswerSerializer",
    "HeartbeatSerializer",
    "InheritedUncertaintySerializer",
    "LatestFiguresSerializer",
    "LatestMetricSerializer",
    "MetricBatchDocSerializer",
    "MetricNameCountSerializer",
    "MetricNamesSerializer",
    "MetricPointDocSerializer",
    "MetricSeriesSerializer",
    "MetricsAcceptedSerializer",
    "ObservedFigures",
    "PlanFiguresSerializer",
    "PlannedItemSerializer",
    "RunArtifactSerializer",
    "RunCreateSerializer",
    "RunDetailSerializer",
    "RunRefusedSerializer",
    "RunSegmentSerializer",
    "RunSerializer",
    "SeriesPointSerializer",
    "StageSerializer",
    "StopInfoSerializer",
    "StopRuleSerializer",
    "StopRunSerializer",
    "ThroughputSerializer",
    "WritableTeamField",
    "run_id_is_valid",
    "scope",
    "stop_info",
]

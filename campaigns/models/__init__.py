"""Campaign planning: teams, campaigns, planned items, stop rules, decisions, stages, lots,
the frozen plan baseline and its amendments, and the runs logged against a campaign.

A campaign buys one decision. It is planned while `draft`; `commit()` freezes a baseline
snapshot that is never rewritten, after which stop rules are immutable and item changes are
recorded as amendments with a reason.

The package holds one module per concept; everything is re-exported here, so
``from campaigns.models import X`` keeps working."""

from __future__ import annotations

from .api_tokens import ApiToken
from .campaign import Campaign, CampaignQuerySet, PlanBaseline, default_required_components
from .choices import (
    CampaignStatus,
    Comparator,
    ItemRole,
    ItemStatus,
    Outcome,
    RunKind,
    RunStatus,
    StageKind,
    StopRuleKind,
    Tier,
)
from .columns import HOURS, MONEY
from .errors import (
    CampaignClosed,
    CommitOverTeamBudget,
    CommitRefused,
    PlanFrozen,
    RunsStillRunning,
)
from .idempotency import IdempotencyRecord
from .ingest_keys import IngestKey
from .invitations import Invitation, InvitationQuerySet
from .metric_store import MetricBlock, MetricPoint, MetricRollup, MetricSummary
from .plan import (
    AMENDABLE_ITEM_FIELDS,
    WORK_FIELDS,
    Amendment,
    DecisionPoint,
    LotReservation,
    PlannedItem,
    Stage,
    StopRule,
)
from .run_table import RunTableLayout
from .runs import Checkpoint, Run, RunArtifact, RunHoursCorrection, RunSegment, ThroughputSample
from .teams import WRITER_ROLES, Membership, MembershipQuerySet, Role, Team, team_ids_for

__all__ = [
    "AMENDABLE_ITEM_FIELDS",
    "HOURS",
    "MONEY",
    "WORK_FIELDS",
    "WRITER_ROLES",
    "Amendment",
    "ApiToken",
    "Campaign",
    "CampaignClosed",
    "CampaignQuerySet",
    "CampaignStatus",
    "Checkpoint",
    "CommitOverTeamBudget",
    "CommitRefused",
    "Comparator",
    "DecisionPoint",
    "IdempotencyRecord",
    "IngestKey",
    "Invitation",
    "InvitationQuerySet",
    "ItemRole",
    "ItemStatus",
    "LotReservation",
    "Membership",
    "MembershipQuerySet",
    "MetricBlock",
    "MetricPoint",
    "MetricRollup",
    "MetricSummary",
    "Outcome",
    "PlanBaseline",
    "PlanFrozen",
    "PlannedItem",
    "Role",
    "Run",
    "RunArtifact",
    "RunHoursCorrection",
    "RunKind",
    "RunSegment",
    "RunStatus",
    "RunTableLayout",
    "RunsStillRunning",
    "Stage",
    "StageKind",
    "StopRule",
    "StopRuleKind",
    "Team",
    "ThroughputSample",
    "Tier",
    "default_required_components",
    "team_ids_for",
]

"""The fields a planner writes, declared once for every surface: the admin's forms and inlines
(campaigns/admin/forms.py, inlines.py) and the API's serializers (campaigns/api/serializers/)
list them from here, each adding only what it alone shows (ids, timestamps, the observed
figures it reads). A field added to the plan is added here, and every surface has it."""

from __future__ import annotations

from typing import Final

STOP_RULE_FIELDS: Final = (
    "kind",
    "metric",
    "comparator",
    "threshold",
    "description",
    "grace_steps",
    "grace_minutes",
    "for_minutes",
)

# A stage as planned; what was observed of it follows in each surface's own order.
STAGE_PLAN_FIELDS: Final = (
    "name",
    "kind",
    "machine",
    "resource",
    "variant",
    "planned_hours",
    "depends_on",
)
STAGE_OBSERVED_FIELDS: Final = ("observed_hours", "deviation_note", "observed_reason")

# The campaign's terms after its corpus (the API nests the corpus as one `corpus` object).
CAMPAIGN_TERMS: Final = (
    "expected_deliverables",
    "decision_threshold",
    "window_hours",
    "budget",
    "currency",
    "hourly_rate_per_gpu",
    "required_checkpoint_components",
)
CAMPAIGN_FIELDS: Final = (
    "team",
    "title",
    "question",
    "corpus_name",
    "corpus_revision",
    *CAMPAIGN_TERMS,
)

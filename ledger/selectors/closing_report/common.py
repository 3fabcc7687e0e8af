"""What every section of the closing report shares: its schema name, which runs stand for a
stage, and how a moment is written (to the minute, with its time zone)."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from campaigns.domain import observed_hours

REPORT_SCHEMA = "campaign-desk/closing-report/1"
# Which runs a stage of a planned item is made of (docs/domain.md §8.6): one rule, one place.
RUN_KIND_FOR_STAGE = observed_hours.RUN_KIND_FOR_STAGE


def moment(value: Any) -> str | None:
    """A moment to the minute with its time zone ("2026-11-30 19:06 UTC"): seconds and
    microseconds say nothing a reader of a closing report needs."""
    if not value:
        return None
    return timezone.localtime(value).strftime("%Y-%m-%d %H:%M %Z")

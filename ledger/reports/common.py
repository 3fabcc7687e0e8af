"""What every section of the closing report shares: its schema name, which runs stand for a
stage, and how a moment is written (to the minute, with its time zone)."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

REPORT_SCHEMA = "campaign-desk/closing-report/1"
# Which runs a stage of a planned item is made of: their observed hours stand for the stage's
# when nobody recorded the stage's own.
RUN_KIND_FOR_STAGE = {"training": "full", "pilot": "pilot", "inference": "inference"}


def moment(value: Any) -> str | None:
    """A moment to the minute with its time zone ("2026-11-30 19:06 UTC"): seconds and
    microseconds say nothing a reader of a closing report needs."""
    if not value:
        return None
    return timezone.localtime(value).strftime("%Y-%m-%d %H:%M %Z")

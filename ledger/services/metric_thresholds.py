"""Writing a team's metric thresholds (docs/domain.md §19.1, `metric_threshold`): owners only
(the caller checked). A running run whose metric crosses one raises an alert at the next scan."""

from __future__ import annotations

import math
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from campaigns.models import Team
from ledger.models import MetricThreshold


@transaction.atomic
def add_threshold(
    *, team: Team, metric: str, comparator: str, threshold: float, acting_user: Any = None
) -> MetricThreshold:
    if not math.isfinite(threshold):
        raise ValidationError({"threshold": "A threshold is a finite number."})
    row = MetricThreshold(
        team=team, metric=metric.strip(), comparator=comparator, threshold=threshold
    )
    row.full_clean()
    row.save()
    return row


@transaction.atomic
def remove_threshold(*, threshold: MetricThreshold, acting_user: Any = None) -> None:
    MetricThreshold.objects.filter(pk=threshold.pk).delete()

"""Reading a team's observed stages as calibration observations (docs/domain.md §20; the
arithmetic is estimates/domain/calibration.py). Five queries whatever the number of campaigns."""

from __future__ import annotations

from decimal import Decimal

from campaigns.models import CampaignStatus, ItemStatus, PlanBaseline, Stage
from campaigns.selectors.observed_hours import reconciled_for
from catalog.models import GpuModel
from estimates.domain import calibration


def team_observations(
    team_id: int, *, exclude_campaign_id: int | None = None
) -> list[calibration.Observation]:
    """Every completed stage of the team: committed, with observed hours (reconciled with its
    runs, docs/domain.md §8.6), and not the stage of an item a decision cut (a cut item's stage
    stopped early: its 0.25 h of 12 h says nothing of how long training takes). Estimated = its
    planned hours in the frozen baseline (the stage's own when the baseline does not hold it)."""
    stages = (
        Stage.objects.filter(campaign__team_id=team_id)
        .exclude(campaign__status=CampaignStatus.DRAFT)
        .exclude(variant__status=ItemStatus.CUT)
    )
    if exclude_campaign_id is not None:
        stages = stages.exclude(campaign_id=exclude_campaign_id)
    rows = list(
        stages.order_by("campaign_id", "id").values_list(
            "id",
            "kind",
            "resource",
            "variant__gpu",
            "campaign_id",
            "campaign__title",
            "planned_hours",
        )
    )
    if not rows:
        return []
    # The stage's one observed figure: its runs', or what was typed where they differ (§8.6).
    seen = reconciled_for({r[4] for r in rows})
    observed_of = {r[0]: seen[r[4]].hours(r[0]) for r in rows}
    frozen: dict[int, Decimal] = {}
    for snapshot in PlanBaseline.objects.filter(campaign_id__in={r[4] for r in rows}).values_list(
        "snapshot", flat=True
    ):
        for stage in (snapshot or {}).get("stages") or []:
            try:
                frozen[int(stage["id"])] = Decimal(str(stage["planned_hours"]))
            except (KeyError, TypeError, ValueError, ArithmeticError):
                continue
    known = list(GpuModel.objects.values_list("name", flat=True))
    found = []
    for pk, kind, resource, item_gpu, campaign_id, title, planned in rows:
        observed = observed_of[pk]
        gpu = calibration.gpu_in(item_gpu or "", known) or calibration.gpu_in(resource, known)
        estimated = frozen.get(pk, planned)
        if estimated is None or observed is None:
            continue
        found.append(
            calibration.Observation(
                kind, gpu, campaign_id, title, float(estimated), float(observed)
            )
        )
    return found


def team_calibrations(
    team_id: int, *, exclude_campaign_id: int | None = None
) -> list[calibration.Calibration]:
    return calibration.calibrate(
        team_observations(team_id, exclude_campaign_id=exclude_campaign_id)
    )

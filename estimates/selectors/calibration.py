"""Reading a team's observed stages as calibration observations (docs/domain.md §20; the
arithmetic is estimates/domain/calibration.py): every committed campaign's timeline
(campaigns/domain/timeline.py), its done stages observed against their committed hours. Eight
queries whatever the number of campaigns, the ended runs summed per item, kind and status in
SQL so that a team's read does not grow with its runs (bench/money/run.py)."""

from __future__ import annotations

from typing import Any

from campaigns.domain.timeline import build
from campaigns.models import Campaign, CampaignStatus, Team, team_ids_for
from campaigns.selectors.timeline import timeline_inputs_of
from catalog.models import GpuModel
from estimates.domain import calibration


def known_gpus() -> list[str]:
    """The catalogue's GPU model names, which resource labels and items are matched against."""
    return list(GpuModel.objects.values_list("name", flat=True))


def team_observations(
    team_id: int, *, exclude_campaign_id: int | None = None
) -> list[calibration.Observation]:
    """Every done stage of the team's committed campaigns, on their timelines: observed (its
    one figure, reconciled with its runs: §8.6), not of an item a decision cut (a cut item's
    stage stopped early: its 0.25 h of 12 h says nothing of how long training takes), and in
    the committed calendar (estimated = its committed hours). Stages tied to no item count."""
    campaigns = Campaign.objects.filter(team_id=team_id).exclude(status=CampaignStatus.DRAFT)
    if exclude_campaign_id is not None:
        campaigns = campaigns.exclude(pk=exclude_campaign_id)
    rows = list(campaigns.order_by("id"))
    if not rows:
        return []
    inputs = timeline_inputs_of(rows, lots=False, summed=True)
    known = known_gpus()
    found: list[calibration.Observation] = []
    for campaign in rows:
        plan = inputs[campaign.pk]
        found.extend(
            calibration.observations_of(
                build(plan),
                campaign_id=campaign.pk,
                title=campaign.title,
                item_gpus={i.id: i.gpu for i in plan.items},
                known_gpus=known,
            )
        )
    return found


def team_calibrations(
    team_id: int, *, exclude_campaign_id: int | None = None
) -> list[calibration.Calibration]:
    return calibration.calibrate(
        team_observations(team_id, exclude_campaign_id=exclude_campaign_id)
    )


def readable_team(user: Any, team_id: int) -> Team | None:
    """The team ``team_id`` when ``user`` may read it (a member, or a superuser), else None."""
    teams = Team.objects.all()
    if not getattr(user, "is_superuser", False):
        teams = teams.filter(pk__in=team_ids_for(user))
    return teams.filter(pk=team_id).first()

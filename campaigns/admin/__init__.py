"""The campaigns app's admin, one module per concept (like Django's own admin package):

- `tenancy`: team-role permissions and scoping (another team's object answers 404);
- `forms`: the campaign page's forms, asking the services' `check_*` first;
- `inlines`: the plan's tables on the campaign page; `inline_writes`: the service behind each;
- `campaign`: the campaign admin and its commit, close and compare pages (`campaign_pages`);
- `runs`: runs and plan baselines, read-only; `teams`: teams, members and the alert webhook.

Importing this package registers the admins. Every write goes through campaigns/services.
"""

from __future__ import annotations

from campaigns.admin import campaign, runs, teams
from campaigns.admin.campaign import CampaignAdmin
from campaigns.admin.campaign_pages import ingest_key_banner
from campaigns.admin.forms import (
    CampaignChildForm,
    CampaignForm,
    CloseCampaignForm,
    DecisionForm,
    ItemWorkForm,
    LotForm,
    PlannedItemForm,
    StageForm,
    StopRuleForm,
)
from campaigns.admin.runs import PlanBaselineAdmin, RunAdmin
from campaigns.admin.teams import MembershipForm, TeamAdmin, TeamForm
from campaigns.admin.tenancy import NotFoundOutsideTeams, TeamScopedAdmin

__all__ = [
    "CampaignAdmin",
    "CampaignChildForm",
    "CampaignForm",
    "CloseCampaignForm",
    "DecisionForm",
    "ItemWorkForm",
    "LotForm",
    "MembershipForm",
    "NotFoundOutsideTeams",
    "PlanBaselineAdmin",
    "PlannedItemForm",
    "RunAdmin",
    "StageForm",
    "StopRuleForm",
    "TeamAdmin",
    "TeamForm",
    "TeamScopedAdmin",
    "campaign",
    "ingest_key_banner",
    "runs",
    "teams",
]

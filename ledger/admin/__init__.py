"""The ledger in the admin, one module per noun: ledger entries (`entries`), deliverables
(`deliverables`), closing reports (`reports`) and their shares (`shares`), team allowances
(`team_budget`), alert channels and deliveries (`alerts`), and the lower app's pages the ledger
extends: the campaign page (`campaigns`) and the team page (`teams`, with its portfolio view in
`portfolio`). Importing the package registers them all."""

from ledger.admin import (  # noqa: F401  (each module registers its pages)
    alerts,
    campaigns,
    deliverables,
    entries,
    reports,
    shares,
    team_budget,
    teams,
)
from ledger.admin.reports import campaign_reports_link

__all__ = ["campaign_reports_link"]

"""What every channel says about one alert (pure; docs/domain.md §19.3): the facts a transport
formats, and the JSON body of the webhook, whose fields are a public contract (docs/api.md).

Text fields are as stored (campaign titles, run ids and stop reasons are user input): each
transport makes them inert for its medium (`ledger.domain.chat_text`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class Notice:
    delivery_id: str
    alert_id: int
    kind: str
    kind_label: str
    message: str
    campaign_id: int
    campaign_title: str
    team_id: int
    team_name: str
    raised_at: datetime
    resolved_at: datetime | None = None
    run_id: str | None = None

    @property
    def title(self) -> str:
        return f"{self.kind_label}: {self.campaign_title}"

    @property
    def raised(self) -> str:
        return f"{self.raised_at:%Y-%m-%d %H:%M} UTC"


def webhook_body(notice: Notice) -> dict[str, Any]:
    """The webhook's JSON: `type` (`alert.<kind>`, Standard Webhooks' convention), `timestamp`
    and `data`, the alert as `GET /campaigns/{id}/alerts/` lists it plus its campaign, team and
    run."""
    return {
        "type": f"alert.{notice.kind}",
        "timestamp": notice.raised_at.isoformat(),
        "data": {
            "id": notice.alert_id,
            "kind": notice.kind,
            "message": notice.message,
            "campaign": {"id": notice.campaign_id, "title": notice.campaign_title},
            "team": {"id": notice.team_id, "name": notice.team_name},
            "run": notice.run_id,
            "raised_at": notice.raised_at.isoformat(),
            "resolved_at": notice.resolved_at.isoformat() if notice.resolved_at else None,
        },
    }

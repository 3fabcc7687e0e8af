"""``import cdesk``: Campaign Desk's module-level API (campaign_desk_client.fluent) and the
client itself, for scripts that read like the peers' (``cdesk.init``, ``cdesk.log``,
``cdesk.finish``)."""

from __future__ import annotations

from campaign_desk_client import ApiError, CampaignDesk, Run, RunStopped, __version__
from campaign_desk_client.fluent import active, finish, init, log

__all__ = [
    "ApiError",
    "CampaignDesk",
    "Run",
    "RunStopped",
    "__version__",
    "active",
    "finish",
    "init",
    "log",
]

"""A small client for Campaign Desk's run-logging API, for training loops.

Standard library only (``urllib`` and ``json``): a training job needs no extra install.

    from campaign_desk_client import CampaignDesk

    desk = CampaignDesk("https://desk.example.org", "cdk_...")  # or CAMPAIGN_DESK_URL/_KEY
    with desk.run(campaign=7, run_id="lora-r16-s1", variant=12, kind="pilot",
                  config={"lr": 2e-4}) as run:
        for step, batch in enumerate(loader):
            loss = train_step(batch)
            run.log(step, loss=loss, lr=sched.get_last_lr()[0])  # raises RunStopped on a stop
    if run.stopped:
        print("stopped by rule", run.stop_rule, ":", run.stop_reason)

See ``CampaignDesk`` and ``Run`` for the details (batching, retries, stops).
"""

from __future__ import annotations

from campaign_desk_client.client import CampaignDesk
from campaign_desk_client.errors import ApiError, DeskUnavailable, RunStopped
from campaign_desk_client.heartbeat import detect_gpus
from campaign_desk_client.run import Run
from campaign_desk_client.wire import Response

__all__ = [
    "ApiError",
    "CampaignDesk",
    "DeskUnavailable",
    "Response",
    "Run",
    "RunStopped",
    "detect_gpus",
]
__version__ = "0.3.0"

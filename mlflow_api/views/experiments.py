"""Experiments are campaigns (`experiment_id` is the campaign id), plus the server-info call
the client makes before large uploads."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from mlflow_api import shapes
from mlflow_api.auth import Caller
from mlflow_api.views.lookups import (
    campaign_by_name,
    campaign_of,
)
from mlflow_api.views.wire import (
    answer,
    endpoint,
    read_body,
    text_field,
)


@endpoint("GET")
def server_info(request: HttpRequest, caller: Caller) -> HttpResponse:
    """What the client asks before large uploads: no multipart, files go in one PUT."""
    return answer(
        {
            "store_type": "CampaignDesk",
            "workspaces_enabled": False,
            "multipart_uploads_enabled": False,
            "multipart_downloads_enabled": False,
            "artifact_max_bytes": settings.ARTIFACT_MAX_BYTES,
        }
    )


@endpoint("GET")
def experiment_by_name(request: HttpRequest, caller: Caller) -> HttpResponse:
    name = text_field(read_body(request), "experiment_name", limit=500)
    return answer({"experiment": shapes.experiment(campaign_by_name(caller, name))})


@endpoint("GET")
def experiment_get(request: HttpRequest, caller: Caller) -> HttpResponse:
    campaign = campaign_of(caller, read_body(request).get("experiment_id"))
    return answer({"experiment": shapes.experiment(campaign)})


@endpoint("POST")
def experiment_create(request: HttpRequest, caller: Caller) -> HttpResponse:
    """Campaigns are created in Campaign Desk; this answers the id the name resolves to."""
    name = text_field(read_body(request), "name", limit=500)
    return answer({"experiment_id": str(campaign_by_name(caller, name).pk)})


@endpoint("POST")
def experiment_search(request: HttpRequest, caller: Caller) -> HttpResponse:
    campaigns = caller.campaigns().order_by("-created_at", "-id")[:1000]
    return answer({"experiments": [shapes.experiment(c) for c in campaigns]})

"""Admin for the persisted estimates (the catalog's admin is catalog/admin.py).

The catalog is shared by every team: staff read it, only superusers change it (a wrong price
would mislead every team's lot advice). Estimates are computed, never edited by hand, and each
belongs to a campaign: members see their teams' estimates only.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from campaigns.admin.tenancy import caller_team_ids
from estimates.models import Estimate

# The columns of the list; the page shows them with the error and the stored inputs and outputs.
_LISTED: tuple[str, ...] = (
    "campaign",
    "item",
    "status",
    "time_source",
    "input_version",
    "computed_version",
    "stale_since",
    "computed_at",
)
_SHOWN: tuple[str, ...] = (*_LISTED, "error", "inputs", "outputs")


@admin.register(Estimate)
class EstimateAdmin(admin.ModelAdmin[Estimate]):
    list_display = _LISTED
    list_filter = ["status", "time_source"]
    search_fields = ["campaign__title", "item__name"]
    list_select_related = ["campaign", "item"]
    fields = _SHOWN
    readonly_fields = _SHOWN

    def get_queryset(self, request: HttpRequest) -> QuerySet[Estimate]:
        qs = super().get_queryset(request)
        if request.user.is_superuser:
            return qs
        return qs.filter(campaign__team_id__in=caller_team_ids(request))

    def has_module_permission(self, request: HttpRequest) -> bool:
        # Asked for every admin page's app list: the caller's teams are read once a request.
        user = request.user
        return bool(user.is_active and (user.is_superuser or caller_team_ids(request)))

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if obj is None:
            return self.has_module_permission(request)
        return bool(request.user.is_superuser or obj.campaign.team_id in caller_team_ids(request))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

"""Who sees and changes what in the admin: team roles, not Django's per-model permissions.

Members see their teams' objects (another team's object answers 404, as if it did not exist),
planners and owners change them, viewers only read; superusers see all. The role answers are
cached for one request, so a page with many inline rows asks each question once.
"""

from __future__ import annotations

import copy
from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse

from campaigns.admin.refusals import RefusalsAsFieldErrors
from campaigns.models import Membership, Role, team_ids_for


def _per_request(request: HttpRequest) -> dict[Any, Any]:
    """Answers cached for one request: the admin asks the same role question for every inline
    row, and one page must not cost a query per row (bench/campaign_page)."""
    cache: dict[Any, Any] | None = getattr(request, "_campaign_desk_roles", None)
    if cache is None:
        cache = {}
        request._campaign_desk_roles = cache  # type: ignore[attr-defined]
    return cache


def caller_team_ids(request: HttpRequest, *, write: bool = False) -> list[int]:
    cache = _per_request(request)
    key = ("teams", write)
    if key not in cache:
        cache[key] = team_ids_for(request.user, write=write)
    return list(cache[key])


def caller_teams_with_role(request: HttpRequest, roles: set[str]) -> list[int]:
    """The teams in which the caller holds one of `roles`, in one query however many teams (the
    admin's menu asks it on every page)."""
    cache = _per_request(request)
    key = ("teams with", frozenset(roles))
    if key not in cache:
        cache[key] = sorted(
            Membership.objects.of(request.user)
            .filter(role__in=roles)
            .values_list("team_id", flat=True)
        )
    return list(cache[key])


def caller_has_role(request: HttpRequest, team_id: int | None, roles: set[str]) -> bool:
    cache = _per_request(request)
    key = ("role", team_id, frozenset(roles))
    if key not in cache:
        cache[key] = Membership.objects.has_role(request.user, team_id, roles)
    return bool(cache[key])


class ChoiceOfTheList(forms.ModelChoiceField):  # type: ignore[type-arg]
    """A choice validated against the rows ``choices_once`` read for the list: Django looks
    the posted value up again, one query per row on each post (a stage's item, a lot's
    plan). A value not in the list is looked up as before."""

    listed: dict[str, Any] | None = None

    def to_python(self, value: Any) -> Any:
        row = self.listed.get(value) if self.listed and isinstance(value, str) else None
        if row is not None:
            # A copy, as a fresh read would be.
            return copy.copy(row)
        return super().to_python(value)


class ChoicesOfTheList(forms.ModelMultipleChoiceField):  # type: ignore[type-arg]
    """Several choices validated against the rows ``choices_once`` read, as ChoiceOfTheList:
    Django's check reads the posted values again, one query per row (a stage's dependencies,
    a decision's cut items). Any value not in the list is checked as before."""

    listed: dict[str, Any] | None = None

    def _check_values(self, value: Any) -> Any:
        listed = self.listed
        if not listed or not isinstance(value, list | tuple) or self.queryset is None:
            return super()._check_values(value)  # type: ignore[misc]
        chosen = {v for v in value if isinstance(v, str)}
        if len(chosen) != len(value) or not chosen <= listed.keys():
            return super()._check_values(value)  # type: ignore[misc]
        # Django's answer, a queryset of the chosen rows in the list's order, already read.
        rows = self.queryset.filter(pk__in=[listed[v].pk for v in chosen])
        rows._result_cache = [copy.copy(row) for key, row in listed.items() if key in chosen]
        rows._prefetch_done = True  # type: ignore[attr-defined]
        return rows


def choices_once(field: Any) -> Any:
    """Evaluate a choice field's queryset once for the whole formset: Django re-runs it for
    every inline row otherwise (a query per row). A ChoiceOfTheList or ChoicesOfTheList also
    validates a posted row against these rows; any other field still asks its queryset."""
    if field is None or not hasattr(field, "queryset"):
        return field
    # One plain query: list() of Django's choice iterator would count the rows first (its
    # len()) and then read them through a server-side cursor. The same pairs, in order.
    iterator = field.iterator(field)
    choices = [("", field.empty_label)] if field.empty_label is not None else []
    rows = list(field.queryset.all())
    choices += [iterator.choice(row) for row in rows]
    if isinstance(field, ChoiceOfTheList | ChoicesOfTheList):
        field.listed = {str(field.prepare_value(row)): row for row in rows}
    field.choices = choices
    inner = getattr(field.widget, "widget", None)  # the admin's related-object wrapper
    if inner is not None:
        inner.choices = choices
    return field


WRITERS: set[str] = {Role.PLANNER, Role.OWNER}
OWNERS: set[str] = {Role.OWNER}
READERS: set[str] = {Role.VIEWER, Role.PLANNER, Role.OWNER}


def object_id_of(request: HttpRequest) -> int:
    """The campaign being edited, to limit an inline's choices to its own rows."""
    match = request.resolver_match
    try:
        return int(match.kwargs.get("object_id", 0)) if match else 0
    except ValueError:
        return 0


class NotFoundOutsideTeams:
    """Django's admin redirects to the index for an object it cannot find; another team's
    object must look exactly like one that does not exist: 404."""

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        if self.get_object(request, object_id) is None:  # type: ignore[attr-defined]
            raise Http404("No such object.")
        return super().change_view(request, object_id, form_url, extra_context)  # type: ignore[misc,no-any-return]


class TeamScopedAdmin(RefusalsAsFieldErrors, NotFoundOutsideTeams, admin.ModelAdmin[Any]):
    """Scope a model to the caller's teams through `team_path` (e.g. 'campaign__team')."""

    team_path = "team"

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        qs = super().get_queryset(request)
        if request.user.is_superuser:
            return qs
        return qs.filter(**{f"{self.team_path}__in": caller_team_ids(request)})

    def team_id_of(self, obj: Any) -> int | None:
        for part in self.team_path.split("__"):
            obj = getattr(obj, part, None)
            if obj is None:
                return None
        return int(obj.pk)

    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.is_active and (
            request.user.is_superuser or bool(caller_team_ids(request))
        )

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if obj is None:
            return self.has_module_permission(request)
        return caller_has_role(request, self.team_id_of(obj), READERS)

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return request.user.is_superuser or bool(caller_team_ids(request, write=True))

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if obj is None:
            return request.user.is_superuser or bool(caller_team_ids(request, write=True))
        return caller_has_role(request, self.team_id_of(obj), WRITERS)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

"""The team's alert channels and every delivery of its alerts, in the admin (docs/domain.md
§19.4–19.5). Owners add, change and remove channels (through `ledger.services.alert_channels`,
as the API does); every member reads the deliveries, each with its state, attempts, last answer
and error. A channel's URL is its secret: the pages show its host only, the forms never fill
it back (blank keeps it). Imported by ledger/admin/teams.py (the team page links here)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django import forms
from django.contrib import admin, messages
from django.http import Http404, HttpRequest

from campaigns.admin import TeamScopedAdmin
from campaigns.admin.service_rows import ServiceWrittenRows
from campaigns.admin.tenancy import (
    OWNERS,
    caller_has_role,
    caller_teams_with_role,
)
from campaigns.models import Team
from ledger.domain import alerts
from ledger.models import AlertChannel, AlertDelivery, ChannelKind
from ledger.services import alert_channels as services

KIND_CHOICES = [(k.name, k.label) for k in alerts.KINDS.values()]


def destination(channel: AlertChannel) -> str:
    """What a page shows of a channel's target: an address, or a URL's scheme and host."""
    if channel.kind == ChannelKind.EMAIL:
        return channel.target or "the team's owners"
    parts = urlsplit(channel.target)
    return f"{parts.scheme}://{parts.hostname}/…" if parts.hostname else "—"


class AlertChannelForm(forms.ModelForm[AlertChannel]):
    target = forms.CharField(
        required=False,
        max_length=1000,
        widget=forms.PasswordInput(render_value=False),
        help_text="An e-mail address (blank: the team's owners), or the webhook URL (https): "
        "never shown back; blank keeps the stored one.",
    )
    secret = forms.CharField(
        required=False,
        max_length=200,
        widget=forms.PasswordInput(render_value=False),
        help_text="Webhook only: the Standard Webhooks signing secret (whsec_…, or any text of "
        "16+ characters); blank generates one on add and keeps the stored one on change.",
    )
    muted_kinds = forms.MultipleChoiceField(
        choices=KIND_CHOICES, required=False, widget=forms.CheckboxSelectMultiple,
        help_text="Alert kinds this channel does not get.",
    )  # fmt: skip

    class Meta:
        model = AlertChannel
        fields = ["team", "kind", "name", "target", "secret", "muted_kinds"]


class AlertChannelAdmin(ServiceWrittenRows, TeamScopedAdmin):
    form = AlertChannelForm
    list_display = ["__str__", "team", "kind", "shown_destination"]
    list_filter = ["kind"]
    search_fields = ["name"]

    @admin.display(description="Destination")
    def shown_destination(self, channel: AlertChannel) -> str:
        return destination(channel)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return ["team", "kind"] if obj is not None else []

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "team":
            kwargs["queryset"] = Team.objects.filter(pk__in=caller_teams_with_role(request, OWNERS))
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return request.user.is_superuser or bool(caller_teams_with_role(request, OWNERS))

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if obj is None:
            return self.has_add_permission(request)
        return caller_has_role(request, obj.team_id, OWNERS)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.has_change_permission(request, obj)

    def write_row(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> Any:
        data = form.cleaned_data
        team = obj.team if change else data["team"]
        if not caller_has_role(request, team.pk, OWNERS):
            raise Http404("Only the team's owners manage its alert channels.")
        # A refusal (ValidationError naming the field) shows beside it: RefusalsAsFieldErrors.
        return self._write(request, obj, data, change)

    def _write(
        self, request: HttpRequest, obj: Any, data: dict[str, Any], change: bool
    ) -> AlertChannel:
        if change:
            return services.change_alert_channel(
                channel=obj, name=data["name"], target=data["target"] or None,
                secret=data["secret"] or None, muted_kinds=data["muted_kinds"],
                acting_user=request.user,
            )  # fmt: skip
        channel, shown = services.add_alert_channel(
            team=data["team"], kind=data["kind"], name=data["name"], target=data["target"],
            secret=data["secret"], muted_kinds=data["muted_kinds"], acting_user=request.user,
        )  # fmt: skip
        if shown:
            messages.info(request, "A signing secret was generated; set one you know to verify.")
        return channel

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        services.remove_alert_channel(channel=obj, acting_user=request.user)

    def delete_queryset(self, request: HttpRequest, queryset: Any) -> None:
        for channel in queryset:
            self.delete_model(request, channel)


class AlertDeliveryAdmin(TeamScopedAdmin):
    """Every delivery of the team's alerts, read-only: what was sent where and how it went."""

    # The channel names its kind; when the next attempt is due is on the row's own page.
    list_display = [
        "alert_kind", "alert__campaign", "channel", "state", "attempts", "last_status", "sent_at",
        "last_error",
    ]  # fmt: skip
    list_filter = ["state", "kind"]
    search_fields = ["alert__message", "last_error"]
    list_select_related = ["alert__campaign", "channel"]
    readonly_fields = [
        "alert", "channel", "kind", "delivery_id", "state", "attempts", "next_attempt_at",
        "claimed_at", "sent_at", "last_status", "last_error",
    ]  # fmt: skip
    fields = list(readonly_fields)

    @admin.display(description="Alert")
    def alert_kind(self, delivery: AlertDelivery) -> str:
        return alerts.label(delivery.alert.kind)

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest | None = None) -> bool:
        # The team page's link; the queryset is the caller's teams' whatever the id.
        return lookup == "team__id__exact" or super().lookup_allowed(lookup, value, request)

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


admin.site.register(AlertChannel, AlertChannelAdmin)
admin.site.register(AlertDelivery, AlertDeliveryAdmin)

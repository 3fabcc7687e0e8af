"""Ledger entries in the admin, scoped by team: add-only, appended through `ledger.services` as
the API appends them; once written only read (a correction is a reversal, a new entry)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest

from campaigns.admin import TeamScopedAdmin
from campaigns.admin.service_rows import ServiceWrittenRows
from campaigns.models import (
    Campaign,
    Membership,
)
from campaigns.services.campaigns import real_user
from ledger import services
from ledger.models import (
    LedgerEntry,
    LedgerImmutable,
)


class LedgerEntryForm(forms.ModelForm[LedgerEntry]):
    """Add a plain entry, or a reversal by naming only the entry it undoes."""

    class Meta:
        model = LedgerEntry
        fields = ["campaign", "reverses", "kind", "description", "amount", "currency"]
        help_texts = {
            "reverses": "To correct an entry, name it here and leave the rest: the reversal "
            "takes its kind and currency and negates its amount.",
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # A reversal takes these from the entry it undoes; clean() asks for them otherwise.
        for name in ("kind", "description", "amount", "currency"):
            if name in self.fields:
                self.fields[name].required = False

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        campaign = data.get("campaign")
        if campaign is None:
            return data
        original = data.get("reverses")
        if original is not None:
            if original.campaign_id != campaign.pk:
                raise ValidationError({"reverses": "that entry is not in this campaign's ledger"})
            services.check_reversal(original)
        else:
            services.check_entry(
                campaign,
                kind=data.get("kind") or "",
                description=data.get("description") or "",
                amount=data.get("amount"),
                currency=data.get("currency") or "",
            )
        return data

    def _post_clean(self) -> None:
        # The model's own validation would ask a reversal for the fields it derives; the
        # domain checks in clean() are the rules here.
        pass


@admin.register(LedgerEntry)
class LedgerEntryAdmin(ServiceWrittenRows, TeamScopedAdmin):
    team_path = "campaign__team"
    form = LedgerEntryForm
    list_display = [
        "id",
        "campaign",
        "kind",
        "description",
        "amount",
        "currency",
        "reverses",
        "created_by",
        "created_at",
    ]
    list_filter = ["kind", "currency"]
    search_fields = ["description", "campaign__title"]
    list_select_related = ["campaign", "reverses", "created_by"]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        if obj is not None:
            return [
                "campaign",
                "kind",
                "description",
                "amount",
                "currency",
                "reverses",
                "reservation",
                "created_by",
                "created_at",
            ]
        return []

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is not None:
            return self.get_readonly_fields(request, obj)
        return list(LedgerEntryForm.Meta.fields)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Append-only: an existing entry is only ever read.
        return False

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        # Only the caller's own objects are offered, and another team's id is refused with the
        # same words as a missing one. (A raw-id widget would render any row's label.)
        if db_field.name == "campaign":
            kwargs["queryset"] = Campaign.objects.for_user(request.user, write=True)
        if db_field.name == "reverses":
            kwargs["queryset"] = LedgerEntry.objects.filter(
                campaign__in=Campaign.objects.for_user(request.user, write=True),
                reverses__isnull=True,
                reversed_by__isnull=True,
            ).select_related("campaign")
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def write_row(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> Any:
        if change:
            raise LedgerImmutable("ledger entries are append-only")
        data = form.cleaned_data
        campaign = data["campaign"]
        if not Membership.objects.can_write(request.user, campaign.team_id):
            raise Http404("No such campaign.")
        if data.get("reverses") is not None:
            entry = services.reverse_entry(
                campaign=campaign,
                entry_id=data["reverses"].pk,
                description=data.get("description") or "",
                acting_user=real_user(request.user),
            )
        else:
            entry = services.post_entry(
                campaign=campaign,
                kind=data["kind"],
                description=data["description"],
                amount=data["amount"],
                currency=data["currency"],
                acting_user=real_user(request.user),
            )
        return entry

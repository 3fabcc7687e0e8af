"""A stage form for the campaign admin's stage inline, applying the observed-hours rules.

The campaign admin (campaigns/admin.py, owned by the planning side) shows observed_hours and
deviation_note in its stage inline; `StageInline.form = ObservedStageForm` makes the admin hold
the same rules as `POST /campaigns/{id}/stages/{sid}/observed/`: a deviation of more than 10%
from the frozen plan needs a note, and observed hours wait for the commit.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils import timezone

from campaigns.models import CampaignStatus, Stage

from .observed import planned_hours_of


class ObservedStageForm(forms.ModelForm[Stage]):
    class Meta:
        model = Stage
        fields = [
            "name",
            "kind",
            "machine",
            "resource",
            "variant",
            "planned_hours",
            "depends_on",
            "observed_hours",
            "deviation_note",
        ]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        observed = data.get("observed_hours")
        if "observed_hours" not in self.changed_data or observed is None:
            return data
        campaign = getattr(self.instance, "campaign", None)
        if campaign is None or campaign.status == CampaignStatus.DRAFT:
            self.add_error(
                "observed_hours",
                "Observed hours are compared with the frozen plan: commit the plan first.",
            )
            return data
        note = (data.get("deviation_note") or "").strip()
        planned = planned_hours_of(self.instance)
        if Stage(planned_hours=planned).needs_deviation_note(observed) and not note:
            self.add_error(
                "deviation_note",
                f"{observed} h observed for {planned} h planned is more than 10% away from the "
                "plan: explain the deviation.",
            )
        return data

    def save(self, commit: bool = True) -> Any:
        if "observed_hours" in self.changed_data:
            self.instance.observed_at = timezone.now() if self.instance.observed_hours else None
        return super().save(commit)

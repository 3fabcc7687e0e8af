"""docs/client.md sends a newcomer only to admin pages and actions that exist."""

from __future__ import annotations

import re
from pathlib import Path

from django.contrib import admin

from campaigns.models import Campaign

GUIDE = Path(__file__).resolve().parent.parent / "docs" / "client.md"


def test_every_admin_page_the_client_guide_names_exists() -> None:
    pages = re.findall(r"admin → ([A-Z][a-z]+(?: [a-z]+)*)", GUIDE.read_text())
    registered = {str(m._meta.verbose_name_plural).lower() for m in admin.site._registry}
    assert [p for p in pages if p.lower() not in registered] == []


def test_the_admin_action_the_client_guide_names_issues_keys() -> None:
    named = re.findall(r'action\s+"([^"]+)"', GUIDE.read_text())
    assert named == ["Issue an ingest key"]
    campaign_admin = admin.site._registry[Campaign]
    descriptions = [
        str(getattr(getattr(campaign_admin, action), "short_description", ""))
        for action in campaign_admin.actions or []
        if isinstance(action, str)
    ]
    assert any(d.startswith(named[0]) for d in descriptions), descriptions

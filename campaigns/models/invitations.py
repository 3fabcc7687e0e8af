"""Invitations to a team (issue 32): a row an owner creates, a link the invitee opens, and a
membership only once the invitee accepts (docs/domain.md §1.1).

The link's token is shown once, in the e-mail; only its SHA-256 digest is stored, as for API
tokens and ingest keys. A row is used once: `accepted_at` and `accepted_by` say when and by
whom; an unused row stops working at `expires_at`."""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.db import models
from django.utils import timezone

from campaigns.models.teams import Role, Team


class InvitationQuerySet(models.QuerySet["Invitation"]):
    def pending(self) -> InvitationQuerySet:
        """Not yet accepted and not expired: the ones whose link still works."""
        return self.filter(accepted_at__isnull=True, expires_at__gt=timezone.now())


class Invitation(models.Model):
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="invitations")
    email = models.EmailField(max_length=254)
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.PLANNER)
    token_hash = models.CharField(max_length=64, unique=True, editable=False)
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="invitations_sent",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    accepted_at = models.DateTimeField(null=True, blank=True)
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="invitations_accepted",
    )

    objects = InvitationQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.email} to {self.team} ({self.role})"

    @staticmethod
    def hash(raw: str) -> str:
        return hashlib.sha256(raw.encode()).hexdigest()

    @property
    def state(self) -> str:
        if self.accepted_at is not None:
            return "accepted"
        return "expired" if self.expires_at <= timezone.now() else "pending"

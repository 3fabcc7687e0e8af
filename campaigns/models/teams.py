"""Teams, their members and roles: the tenancy every query is scoped by."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models

from catalog.validators import no_bidi_controls


class Team(models.Model):
    name = models.CharField(max_length=100, unique=True, validators=[no_bidi_controls])
    created_at = models.DateTimeField(auto_now_add=True)
    # Raw metric points of runs idle this many days are dropped, their summaries and rollups
    # kept (docs/domain.md §27); None keeps them forever.
    metric_retention_days = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Raw metric points older than this many days are dropped (curves stay).",
    )
    members: models.ManyToManyField[Any, Any] = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="Membership", related_name="teams"
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Role(models.TextChoices):
    VIEWER = "viewer", "Viewer"
    PLANNER = "planner", "Planner"
    OWNER = "owner", "Owner"


WRITER_ROLES = frozenset({Role.PLANNER, Role.OWNER})


class MembershipQuerySet(models.QuerySet["Membership"]):
    """Every role check of the project goes through here: the admin, the API and the services
    ask the same question the same way."""

    def writers(self) -> MembershipQuerySet:
        return self.filter(role__in=[Role.PLANNER, Role.OWNER])

    def of(self, user: Any) -> MembershipQuerySet:
        """`user`'s memberships; none for an anonymous caller or an ingest key (no user row)."""
        if not getattr(user, "is_authenticated", False) or getattr(user, "pk", None) is None:
            return self.none()
        return self.filter(user_id=user.pk)

    def team_ids(self, user: Any, *, write: bool = False) -> list[int]:
        """Ids of the teams whose objects `user` may read (or, with write, change)."""
        memberships = self.of(user)
        if write:
            memberships = memberships.writers()
        return list(memberships.values_list("team_id", flat=True))

    def has_role(self, user: Any, team_id: int | None, roles: set[str] | frozenset[str]) -> bool:
        if getattr(user, "is_superuser", False):
            return True
        if team_id is None:
            return False
        return self.of(user).filter(team_id=team_id, role__in=roles).exists()

    def can_write(self, user: Any, team_id: int | None) -> bool:
        return self.has_role(user, team_id, WRITER_ROLES)


class Membership(models.Model):
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.PLANNER)

    objects = MembershipQuerySet.as_manager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["team", "user"], name="one_role_per_team")]

    def __str__(self) -> str:
        return f"{self.user} in {self.team} ({self.role})"


def team_ids_for(user: Any, *, write: bool = False) -> list[int]:
    """Ids of the teams whose objects `user` may read (or, with write, change)."""
    return Membership.objects.team_ids(user, write=write)

"""Teams and members through campaigns/services/teams.py: the services' refusals, and the team
admin, its membership inline and the `create_team` / `load_demo` commands writing through them."""

from io import StringIO
from typing import Any
from unittest import mock

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.test import TestCase
from django.urls import reverse

from campaigns.models import Membership, Team
from campaigns.services import teams
from campaigns.tests.factories import make_user


class TeamServiceTests(TestCase):
    def test_a_team_needs_a_name_that_no_other_team_has(self) -> None:
        teams.create_team(name="nlp")
        for name in ("", "  ", "nlp", " nlp "):
            with self.assertRaises(ValidationError) as refused:
                teams.create_team(name=name)
            self.assertIn("name", refused.exception.message_dict)
        self.assertEqual(Team.objects.count(), 1)

    def test_a_rename_keeps_the_team_and_refuses_another_teams_name(self) -> None:
        nlp, vision = teams.create_team(name="nlp"), teams.create_team(name="vision")
        self.assertEqual(teams.rename_team(team=nlp, name="nlp-2").name, "nlp-2")
        with self.assertRaises(ValidationError):
            teams.rename_team(team=nlp, name="vision")
        vision.refresh_from_db()
        self.assertEqual(vision.name, "vision")

    def test_one_role_per_member_and_team(self) -> None:
        team, user = teams.create_team(name="nlp"), make_user("ana")
        membership = teams.add_member(team=team, member=user, role="viewer")
        with self.assertRaises(ValidationError) as refused:
            teams.add_member(team=team, member=user, role="owner")
        self.assertIn("member", refused.exception.message_dict)
        self.assertEqual(teams.change_role(membership=membership, role="owner").role, "owner")
        with self.assertRaises(ValidationError) as bad_role:
            teams.change_role(membership=membership, role="admin")
        self.assertIn("role", bad_role.exception.message_dict)
        teams.remove_member(membership=membership)
        self.assertFalse(Membership.objects.exists())

    def test_set_member_adds_or_changes_the_role_idempotently(self) -> None:
        team, user = teams.create_team(name="nlp"), make_user("ana")
        teams.set_member(team=team, member=user, role="viewer")
        teams.set_member(team=team, member=user, role="planner")
        teams.set_member(team=team, member=user, role="planner")
        self.assertEqual(list(team.memberships.values_list("role", flat=True)), ["planner"])

    def test_new_users_get_no_usable_password_unless_one_is_given(self) -> None:
        plain, created = teams.provision_user(username="newbie", email="n@example.org")
        self.assertTrue(created)
        self.assertFalse(plain.has_usable_password())
        self.assertTrue(plain.is_staff)
        self.assertEqual(plain.email, "n@example.org")
        with_password, _ = teams.provision_user(username="demo", password="s3cret-pass")
        self.assertTrue(with_password.check_password("s3cret-pass"))
        again, created = teams.provision_user(username="demo")
        self.assertFalse(created)
        self.assertTrue(again.check_password("s3cret-pass"))  # unchanged without a password


class TeamAdminThroughServicesTests(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.owner = make_user("olga", team=cls.team, role="owner")
        cls.planner = make_user("pia", team=cls.team, role="planner")
        cls.newcomer = make_user("nico")

    def post(self, rows: list[tuple[str, str]], **team: str):  # type: ignore[no-untyped-def]
        """The team page as posted: the stored members, then `rows` as new ones; `team`
        overrides any posted field."""
        self.client.force_login(self.owner)
        existing = list(self.team.memberships.order_by("id"))
        data: dict[str, Any] = {
            "name": self.team.name,
            "alert_channels-TOTAL_FORMS": "0",
            "alert_channels-INITIAL_FORMS": "0",
            "invitations-TOTAL_FORMS": "0",
            "invitations-INITIAL_FORMS": "0",
            "memberships-TOTAL_FORMS": str(len(existing) + len(rows)),
            "memberships-INITIAL_FORMS": str(len(existing)),
            "memberships-MIN_NUM_FORMS": "0",
            "memberships-MAX_NUM_FORMS": "1000",
        }
        for i, m in enumerate(existing):
            data |= {
                f"memberships-{i}-id": str(m.pk),
                f"memberships-{i}-team": str(self.team.pk),
                f"memberships-{i}-username": m.user.username,
                f"memberships-{i}-role": m.role,
            }
        for j, (username, role) in enumerate(rows, start=len(existing)):
            data |= {
                f"memberships-{j}-team": str(self.team.pk),
                f"memberships-{j}-username": username,
                f"memberships-{j}-role": role,
            }
        url = reverse("admin:campaigns_team_change", args=[self.team.pk])
        return self.client.post(url, data | team)

    def test_a_name_typed_in_a_new_member_row_adds_no_one(self) -> None:
        # Nobody joins without accepting an invitation (docs/domain.md §1.5).
        with mock.patch.object(teams, "add_member", wraps=teams.add_member) as service:
            self.post([("nico", "viewer")])
        self.assertEqual(service.call_count, 0)
        self.assertFalse(self.team.memberships.filter(user=self.newcomer).exists())

    def test_a_role_change_and_a_removal_go_through_the_services(self) -> None:
        planner = self.team.memberships.get(user=self.planner)
        with (
            mock.patch.object(teams, "change_role", wraps=teams.change_role) as change,
            mock.patch.object(teams, "remove_member", wraps=teams.remove_member) as remove,
        ):
            answer = self.post([], **{f"memberships-{self._row_of(planner)}-role": "viewer"})
            self.assertEqual(answer.status_code, 302)
            self.assertEqual(change.call_count, 1)
            answer = self.post([], **{f"memberships-{self._row_of(planner)}-DELETE": "on"})
            self.assertEqual(answer.status_code, 302)
            self.assertEqual(remove.call_count, 1)
        self.assertFalse(self.team.memberships.filter(user=self.planner).exists())

    def _row_of(self, membership: Membership) -> int:
        return list(self.team.memberships.order_by("id")).index(membership)

    def test_a_rename_goes_through_the_service_and_another_teams_name_is_refused(self) -> None:
        Team.objects.create(name="vision")
        answer = self.post([], name="vision")
        self.assertEqual(answer.status_code, 200)
        self.assertIn("exists already", " ".join(answer.context["adminform"].form.errors["name"]))
        with mock.patch.object(teams, "rename_team", wraps=teams.rename_team) as service:
            answer = self.post([], name="nlp-2")
        self.assertEqual(answer.status_code, 302)
        self.assertEqual(service.call_count, 1)
        self.team.refresh_from_db()
        self.assertEqual(self.team.name, "nlp-2")

    def test_a_superuser_creates_a_team_through_the_service(self) -> None:
        admin = get_user_model().objects.create_superuser("root", "root@example.org", "pw-root-1")
        self.client.force_login(admin)
        data = {
            "name": "speech",
            "alert_channels-TOTAL_FORMS": "0",
            "alert_channels-INITIAL_FORMS": "0",
            "invitations-TOTAL_FORMS": "1",
            "invitations-INITIAL_FORMS": "0",
            "invitations-0-email": "nico@example.org",
            "invitations-0-role": "owner",
            "memberships-TOTAL_FORMS": "0",
            "memberships-INITIAL_FORMS": "0",
        }
        with mock.patch.object(teams, "create_team", wraps=teams.create_team) as service:
            answer = self.client.post(reverse("admin:campaigns_team_add"), data)
        self.assertEqual(answer.status_code, 302)
        self.assertEqual(service.call_count, 1)
        speech = Team.objects.get(name="speech")
        # Its first owner is invited: a member once they accept.
        self.assertEqual(speech.invitations.get().email, "nico@example.org")
        self.assertFalse(speech.memberships.exists())


class CommandsThroughServicesTests(TestCase):
    def test_create_team_writes_through_the_team_services(self) -> None:
        get_user_model().objects.create_user("existing", password="keep-this-1")
        with (
            mock.patch.object(teams, "ensure_team", wraps=teams.ensure_team) as ensure,
            mock.patch.object(teams, "set_member", wraps=teams.set_member) as member,
        ):
            call_command(
                "create_team", "vision", "--member", "existing:owner", "--member", "newbie",
                stdout=StringIO(),
            )  # fmt: skip
        self.assertEqual(ensure.call_count, 1)
        self.assertEqual(member.call_count, 2)
        users = get_user_model().objects
        self.assertFalse(users.get(username="newbie").has_usable_password())
        self.assertTrue(users.get(username="existing").check_password("keep-this-1"))

    def test_create_team_run_twice_changes_only_the_role(self) -> None:
        call_command("create_team", "vision", "--member", "ana:viewer", stdout=StringIO())
        call_command("create_team", "vision", "--member", "ana:owner", stdout=StringIO())
        team = Team.objects.get(name="vision")
        self.assertEqual(list(team.memberships.values_list("role", flat=True)), ["owner"])

    def test_load_demo_writes_the_team_and_its_owner_through_the_services(self) -> None:
        with (
            mock.patch.dict("os.environ", {"DEMO_PASSWORD": "demo-pass-1"}),
            mock.patch.object(teams, "set_member", wraps=teams.set_member) as member,
            mock.patch.object(teams, "provision_user", wraps=teams.provision_user) as user,
        ):
            call_command("load_demo", stdout=StringIO())
            call_command("load_demo", stdout=StringIO())
        self.assertEqual((member.call_count, user.call_count), (2, 2))
        demo = get_user_model().objects.get(username="demo")
        self.assertTrue(demo.check_password("demo-pass-1"))  # the demo user signs in
        self.assertEqual(Team.objects.get(name="demo").memberships.get().role, "owner")


def test_the_team_admin_and_the_commands_write_no_model_themselves() -> None:
    """The team admin, `create_team` and `load_demo` leave every write to the services: no ORM
    write call in their source (reads, e.g. `.filter(...).first()`, are fine)."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    writes = re.compile(
        r"\.(save|delete|create|update|get_or_create|update_or_create|bulk_create)\(|super\(\)\.s"
    )
    for path in (
        "campaigns/admin/teams.py",
        "campaigns/management/commands/create_team.py",
        "ledger/management/commands/load_demo.py",
    ):
        found = [line for line in (root / path).read_text().splitlines() if writes.search(line)]
        assert found == [], f"{path} writes directly: {found}"

from decimal import Decimal
from io import StringIO

from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import TestCase

from campaigns.models import Campaign, Membership, PlannedItem, Stage, StopRule, Team
from estimates.selectors.timeline import campaign_forecast


def counts() -> dict[str, int]:
    return {
        "users": get_user_model().objects.count(),
        "teams": Team.objects.count(),
        "campaigns": Campaign.objects.count(),
        "items": PlannedItem.objects.count(),
        "rules": StopRule.objects.count(),
        "stages": Stage.objects.count(),
    }


class LoadDemoTests(TestCase):
    def test_it_loads_the_seed_campaign_once_however_often_it_runs(self) -> None:
        out = StringIO()
        call_command("load_demo", stdout=out)
        first = counts()
        call_command("load_demo", stdout=StringIO())
        self.assertEqual(counts(), first)
        self.assertEqual(first["campaigns"], 1)
        self.assertIn("password", out.getvalue())

    def test_the_demo_is_seed_004s_example(self) -> None:
        call_command("load_demo", stdout=StringIO())
        campaign = Campaign.objects.get(team__name="demo")
        roles = sorted(campaign.items.values_list("role", flat=True))
        self.assertEqual(roles, ["baseline", "data_check", "resume_check", "variant", "variant"])
        mandatory = set(campaign.items.filter(tier="mandatory").values_list("role", flat=True))
        self.assertLessEqual({"baseline", "data_check", "resume_check"}, mandatory)
        self.assertEqual(
            sorted(campaign.stop_rules.values_list("kind", flat=True)),
            ["input_truncated", "metric_threshold", "no_usable_resume", "non_finite_loss"],
        )
        self.assertEqual(campaign.decisions.get().label, "after the pilot")
        self.assertEqual(
            campaign_forecast(campaign).headline,
            "The calendar takes 48 h of a 72 h window: 24 h to spare.",
        )
        self.assertEqual(campaign.lots.get().plan.price, Decimal("47.14"))
        self.assertEqual(
            Membership.objects.get(user__username="demo", team=campaign.team).role, "owner"
        )

    def test_the_demo_password_comes_from_the_environment_when_given(self) -> None:
        import os
        from unittest import mock

        with mock.patch.dict(os.environ, {"DEMO_PASSWORD": "a-chosen-password"}):
            out = StringIO()
            call_command("load_demo", stdout=out)
        self.assertNotIn("a-chosen-password", out.getvalue())
        self.assertTrue(
            get_user_model().objects.get(username="demo").check_password("a-chosen-password")
        )

    def test_a_generated_password_is_printed_once_and_works(self) -> None:
        out = StringIO()
        call_command("load_demo", stdout=out)
        line = next(x for x in out.getvalue().splitlines() if "password:" in x)
        password = line.split("password: ")[1].split(" ")[0]
        self.assertTrue(get_user_model().objects.get(username="demo").check_password(password))
        again = StringIO()
        call_command("load_demo", stdout=again)
        self.assertNotIn(password, again.getvalue())


class CreateTeamTests(TestCase):
    def test_it_creates_the_team_and_missing_users_with_their_roles(self) -> None:
        get_user_model().objects.create_user("existing")
        call_command(
            "create_team",
            "vision",
            "--member",
            "existing:owner",
            "--member",
            "newbie",
            "--member",
            "watcher:viewer",
            stdout=StringIO(),
        )
        team = Team.objects.get(name="vision")
        roles = dict(team.memberships.values_list("user__username", "role"))
        self.assertEqual(roles, {"existing": "owner", "newbie": "planner", "watcher": "viewer"})
        self.assertTrue(get_user_model().objects.get(username="newbie").is_staff)

    def test_it_refuses_an_unknown_role(self) -> None:
        with self.assertRaisesMessage(CommandError, "role must be one of"):
            call_command("create_team", "x", "--member", "bob:admin", stdout=StringIO())
        self.assertFalse(Team.objects.filter(name="x").exists())

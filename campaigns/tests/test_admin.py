import json
import re
from decimal import Decimal
from io import StringIO
from typing import Any

from django.core.management import call_command
from django.test import TestCase
from django.urls import reverse

from campaigns.models import Campaign, PlannedItem, Team
from campaigns.services.plans import commit_plan
from campaigns.tests.factories import make_campaign, make_plannable, make_user


def change_url(campaign: Campaign) -> str:
    return reverse("admin:campaigns_campaign_change", args=[campaign.pk])


class AdminScopingTests(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.nlp = Team.objects.create(name="nlp")
        cls.vision = Team.objects.create(name="vision")
        cls.planner = make_user("pia", team=cls.nlp, role="planner")
        cls.viewer = make_user("vic", team=cls.nlp, role="viewer")
        cls.outsider = make_user("otto", team=cls.vision, role="owner")
        cls.ours = make_plannable(cls.nlp, title="Ours")
        cls.theirs = make_plannable(cls.vision, title="Theirs")

    def test_a_member_lists_only_their_teams_campaigns(self) -> None:
        self.client.force_login(self.planner)
        page = self.client.get(reverse("admin:campaigns_campaign_changelist"))
        self.assertEqual(page.status_code, 200)
        self.assertContains(page, "Ours")
        self.assertNotContains(page, "Theirs")

    def test_another_teams_campaign_url_answers_404(self) -> None:
        self.client.force_login(self.outsider)
        self.assertEqual(self.client.get(change_url(self.ours)).status_code, 404)
        team_page = reverse("admin:campaigns_team_change", args=[self.nlp.pk])
        self.assertEqual(self.client.get(team_page).status_code, 404)
        commit = reverse("admin:campaigns_campaign_commit", args=[self.ours.pk])
        self.assertEqual(self.client.post(commit).status_code, 404)
        self.ours.refresh_from_db()
        self.assertEqual(self.ours.status, "draft")

    def test_a_viewer_reads_but_cannot_change(self) -> None:
        self.client.force_login(self.viewer)
        page = self.client.get(change_url(self.ours))
        self.assertEqual(page.status_code, 200)
        self.assertNotContains(page, 'name="_save"')
        self.assertNotContains(page, "Commit the plan")
        posted = self.client.post(change_url(self.ours), {"title": "hijacked"})
        self.assertEqual(posted.status_code, 403)
        self.assertEqual(Campaign.objects.get(pk=self.ours.pk).title, "Ours")
        add = self.client.get(reverse("admin:campaigns_campaign_add"))
        self.assertEqual(add.status_code, 403)

    def test_a_planner_sees_the_summary_and_commits_from_the_page(self) -> None:
        self.client.force_login(self.planner)
        page = self.client.get(change_url(self.ours))
        self.assertContains(page, "The calendar takes 22 h of a 72 h window: 50 h to spare")
        self.assertContains(page, "Commit the plan")
        commit = reverse("admin:campaigns_campaign_commit", args=[self.ours.pk])
        confirm = self.client.get(commit)
        self.assertContains(confirm, "What commit freezes")
        self.ours.refresh_from_db()
        self.assertEqual(self.ours.status, "draft")  # looking is not committing
        done = self.client.post(commit, {"confirm": "yes"}, follow=True)
        self.assertContains(done, "is committed")
        self.ours.refresh_from_db()
        self.assertEqual(self.ours.status, "committed")

    def test_the_commit_page_lists_the_warnings_and_a_post_without_confirm_commits_nothing(
        self,
    ) -> None:
        PlannedItem.objects.create(
            campaign=self.ours, name="Data check", role="data_check", tier="mandatory"
        )
        self.client.force_login(self.planner)
        commit = reverse("admin:campaigns_campaign_commit", args=[self.ours.pk])
        page = self.client.get(commit)
        self.assertContains(page, "Data check has no stage")
        self.assertContains(page, "No lot is reserved")
        self.assertContains(page, 'id="confirm-commit"')
        answer = self.client.post(commit)
        # The page again, still asking for the confirmation: not a redirect to a committed plan.
        self.assertContains(answer, 'id="confirm-commit"')
        self.ours.refresh_from_db()
        self.assertEqual(self.ours.status, "draft")

    def test_commit_from_the_admin_says_what_is_missing(self) -> None:
        empty = make_campaign(self.nlp, title="Empty")
        self.client.force_login(self.planner)
        commit = reverse("admin:campaigns_campaign_commit", args=[empty.pk])
        done = self.client.post(commit, follow=True)
        self.assertContains(done, "at least one mandatory item")
        self.assertContains(done, "at least one stop rule")
        empty.refresh_from_db()
        self.assertEqual(empty.status, "draft")

    def test_the_team_filter_offers_only_the_callers_teams_on_add(self) -> None:
        self.client.force_login(self.planner)
        page = self.client.get(reverse("admin:campaigns_campaign_add"))
        self.assertEqual(page.status_code, 200)
        self.assertContains(page, ">nlp<")
        self.assertNotContains(page, ">vision<")

    def test_a_superuser_sees_every_team(self) -> None:
        root = make_user("root", is_superuser=True)
        self.client.force_login(root)
        page = self.client.get(reverse("admin:campaigns_campaign_changelist"))
        self.assertContains(page, "Ours")
        self.assertContains(page, "Theirs")


class AdminPlanningTests(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        call_command("load_demo", stdout=StringIO())
        cls.demo = Campaign.objects.get(team__name="demo")
        cls.team = cls.demo.team
        cls.planner = make_user("pia", team=cls.team, role="planner")

    def test_every_admin_page_renders_with_the_demo_loaded(self) -> None:
        root = make_user("root", is_superuser=True)
        self.client.force_login(root)
        for name, args in [
            ("admin:index", []),
            ("admin:campaigns_campaign_changelist", []),
            ("admin:campaigns_campaign_add", []),
            ("admin:campaigns_campaign_change", [self.demo.pk]),
            ("admin:campaigns_team_changelist", []),
            ("admin:campaigns_team_change", [self.team.pk]),
            ("admin:campaigns_run_changelist", []),
            ("admin:campaigns_planbaseline_changelist", []),
        ]:
            with self.subTest(page=name):
                self.assertEqual(self.client.get(reverse(name, args=args)).status_code, 200)
        self.assertContains(self.client.get(reverse("admin:index")), "Campaign Desk")
        filtered = self.client.get(
            reverse("admin:campaigns_campaign_changelist"),
            {"status__exact": "draft", "items__tier": "mandatory", "q": "variant"},
        )
        self.assertContains(filtered, self.demo.title)

    def test_the_demo_page_shows_the_seed_summary(self) -> None:
        self.client.force_login(self.planner)
        page = self.client.get(change_url(self.demo))
        self.assertContains(page, "forecast", status_code=200)
        self.assertContains(page, "The calendar takes 48 h of a 72 h window: 24 h to spare")
        self.assertContains(page, "mandatory: <strong>4</strong>", html=False)

    def test_it_alerts_when_stages_on_one_gpu_outgrow_the_window(self) -> None:
        stage = self.demo.stages.get(name="Train variant B")
        stage.planned_hours = Decimal("40")
        stage.save()
        self.client.force_login(self.planner)
        page = self.client.get(change_url(self.demo))
        self.assertContains(page, "The calendar takes 78 h of a 72 h window: 6 h over")
        self.assertContains(page, "rtx4090-a: 78 h of machine stages")

    def test_an_item_changed_after_commit_needs_a_reason_and_leaves_the_baseline(self) -> None:
        commit_plan(campaign=self.demo, acting_user=self.planner)
        frozen = self.demo.baseline.snapshot
        self.client.force_login(self.planner)
        page = self.client.get(change_url(self.demo))
        form = page.context["adminform"].form
        data = {k: v for k, v in form.initial.items() if v is not None}
        data = self._formset_post(page)
        item = self.demo.items.get(name="Variant B: LoRA rank 64")
        idx = next(
            i
            for i, f in enumerate(page.context["inline_admin_formsets"][0].formset.forms)
            if f.instance.pk == item.pk
        )
        data[f"items-{idx}-planned_hours"] = "14"
        refused = self.client.post(change_url(self.demo), data)
        self.assertEqual(refused.status_code, 200)
        self.assertContains(refused, "say why this item changes")
        data[f"items-{idx}-amendment_reason"] = "pilot throughput was 30% lower"
        accepted = self.client.post(change_url(self.demo), data)
        self.assertEqual(accepted.status_code, 302, accepted.content[:3000])
        item.refresh_from_db()
        self.assertEqual(item.planned_hours, Decimal("14"))
        self.assertEqual(item.amendments.get().reason, "pilot throughput was 30% lower")
        self.demo.baseline.refresh_from_db()
        self.assertEqual(self.demo.baseline.snapshot, frozen)

    def _formset_post(self, page) -> dict[str, str]:  # type: ignore[no-untyped-def]
        """The change form's current values, as the browser would post them back."""
        data: dict[str, str] = {}
        form = page.context["adminform"].form
        for name, field in form.fields.items():
            if name in form.initial and not field.disabled:
                value = form.initial[name]
                if isinstance(value, list | dict):
                    data[name] = json.dumps(value)
                elif value is not None:
                    data[name] = value if isinstance(value, str) else str(value)
        for inline in page.context["inline_admin_formsets"]:
            data.update(_inline_post(inline.formset))
        return data

    def test_a_cut_decided_in_the_admin_records_who_and_when_and_keeps_the_row(self) -> None:
        self.client.force_login(self.planner)
        page = self.client.get(change_url(self.demo))
        data = self._formset_post(page)
        variant_b = self.demo.items.get(name="Variant B: LoRA rank 64")
        data["decisions-0-outcome"] = "cut"
        data["decisions-0-rationale"] = "the pilot ran at half the assumed speed"
        data["decisions-0-cut_variants"] = str(variant_b.pk)
        saved = self.client.post(change_url(self.demo), data)
        self.assertEqual(saved.status_code, 302, saved.content[:300])
        decision = self.demo.decisions.get()
        self.assertEqual(decision.outcome, "cut")
        self.assertEqual(decision.decided_by, self.planner)
        self.assertIsNotNone(decision.decided_at)
        variant_b.refresh_from_db()
        self.assertEqual(variant_b.status, "cut")
        page = self.client.get(change_url(self.demo))
        self.assertContains(page, "useful: <strong>0</strong>", html=False)

    def test_the_generate_report_action_builds_a_closing_report(self) -> None:
        from ledger.models import Report

        commit_plan(campaign=self.demo, acting_user=self.planner)
        self.client.force_login(self.planner)
        done = self.client.post(
            reverse("admin:campaigns_campaign_changelist"),
            {"action": "generate_closing_report", "_selected_action": [self.demo.pk]},
            follow=True,
        )
        self.assertContains(done, "is being built")
        report = Report.objects.get(campaign=self.demo)
        self.assertEqual(report.requested_by, self.planner)
        page = self.client.get(change_url(self.demo))
        self.assertContains(page, f"campaign__id__exact={self.demo.pk}")

    def test_stop_rules_show_read_only_after_commit(self) -> None:
        commit_plan(campaign=self.demo, acting_user=self.planner)
        self.client.force_login(self.planner)
        page = self.client.get(change_url(self.demo))
        rules = next(
            f
            for f in page.context["inline_admin_formsets"]
            if f.formset.model.__name__ == "StopRule"
        )
        self.assertFalse(rules.has_add_permission)
        self.assertFalse(rules.has_change_permission)
        self.assertFalse(rules.has_delete_permission)
        self.assertEqual(PlannedItem.objects.filter(campaign=self.demo).count(), 5)


class TeamMembersAdminTests(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.owner = make_user("olga", team=cls.team, role="owner")
        cls.planner = make_user("pia", team=cls.team, role="planner")
        cls.newcomer = make_user("nico")

    def post_members(self, user, rows: list[tuple[str, str]]):  # type: ignore[no-untyped-def]
        self.client.force_login(user)
        existing = list(self.team.memberships.order_by("id"))
        data = {
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
            data[f"memberships-{i}-id"] = str(m.pk)
            data[f"memberships-{i}-team"] = str(self.team.pk)
            data[f"memberships-{i}-username"] = m.user.username
            data[f"memberships-{i}-role"] = m.role
        for j, (username, role) in enumerate(rows, start=len(existing)):
            data[f"memberships-{j}-team"] = str(self.team.pk)
            data[f"memberships-{j}-username"] = username
            data[f"memberships-{j}-role"] = role
        url = reverse("admin:campaigns_team_change", args=[self.team.pk])
        return self.client.post(url, data)

    def test_an_owner_cannot_add_a_member_by_username(self) -> None:
        # Only an accepted invitation makes a member (docs/domain.md §1.5).
        self.post_members(self.owner, [("nico", "viewer")])
        self.assertFalse(self.team.memberships.filter(user=self.newcomer).exists())

    def test_a_planner_cannot_manage_members(self) -> None:
        answer = self.post_members(self.planner, [("nico", "owner")])
        self.assertEqual(answer.status_code, 403)
        self.assertFalse(self.team.memberships.filter(user=self.newcomer).exists())


class IngestKeyBannerTests(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.owner = make_user("olga", team=cls.team, role="owner")
        cls.campaign = make_plannable(cls.team, title="Banner")

    def test_the_key_banner_shows_the_campaign_and_item_ids_and_snippets_with_them(self) -> None:
        self.client.force_login(self.owner)
        page = self.client.post(
            reverse("admin:campaigns_campaign_changelist"),
            {"action": "issue_ingest_key", "_selected_action": [self.campaign.pk]},
            follow=True,
        )
        html = page.content.decode()
        self.assertIn('id="ingest-key-banner"', html)
        self.assertIn(f"campaign id <strong>{self.campaign.pk}</strong>", html)
        baseline = self.campaign.items.get(name="baseline")
        self.assertIn(f"baseline (id <strong>{baseline.pk}</strong>)", html)
        self.assertIn(f"CampaignDesk().run(campaign={self.campaign.pk}", html)
        self.assertIn(f"/api/v1/campaigns/{self.campaign.pk}/runs/", html)
        self.assertIn(f"&quot;variant&quot;: {baseline.pk}", html)
        self.assertEqual(html.count("Bearer cdk_"), 1)

    def raw_key_of(self, page: Any) -> str:
        found = re.search(r"cdk_[A-Za-z0-9_-]+", page.content.decode())
        assert found is not None
        return found[0]

    def test_the_key_is_on_a_one_time_page_never_in_the_messages_cookie(self) -> None:
        """docs/domain.md §26: Django's messages cookie is signed, not encrypted."""
        self.client.force_login(self.owner)
        for page in (
            self.client.post(
                reverse("admin:campaigns_campaign_changelist"),
                {"action": "issue_ingest_key", "_selected_action": [self.campaign.pk]},
            ),
            self.client.post(
                reverse("admin:campaigns_campaign_ingest_key", args=[self.campaign.pk])
            ),
        ):
            raw = self.raw_key_of(page)
            self.assertEqual(page.status_code, 200)
            self.assertIn("no-store", page["Cache-Control"])
            self.assertIn('id="shown-once"', page.content.decode())
            cookies = " ".join(morsel.value for morsel in self.client.cookies.values())
            self.assertNotIn(raw, cookies)
            self.assertNotIn(raw[4:20], cookies)
            later = self.client.get(
                reverse("admin:campaigns_campaign_change", args=[self.campaign.pk])
            )
            self.assertNotIn(raw, later.content.decode())
        self.assertEqual(self.campaign.ingest_keys.count(), 2)


def _inline_post(formset) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """An inline's management form and stored rows as the browser posts them: the empty row
    each inline offers is left out, as it would be if the browser's user removed it."""
    data = {
        f"{formset.prefix}-{key}": str(value)
        for key, value in formset.management_form.initial.items()
    }
    data[f"{formset.prefix}-TOTAL_FORMS"] = str(formset.initial_form_count())
    for i, f in enumerate(formset.initial_forms):
        for name, field in f.fields.items():
            value = f.instance.pk if name == "id" and f.instance.pk else f.initial.get(name)
            if field.disabled or value is None or isinstance(value, list) or value is False:
                continue
            if isinstance(value, dict):
                value = json.dumps(value)
            data[f"{formset.prefix}-{i}-{name}"] = "on" if value is True else str(value)
    return data

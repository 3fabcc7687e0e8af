"""A deliverable is submitted from the campaign's admin page (issue 18, item 4): the form calls
`ledger.services.submit_deliverable`, so the server's checks decide the verdict, which the
stored deliverable's page shows; a refusal is shown beside its field and stores nothing."""

from __future__ import annotations

from django.test import TestCase
from django.urls import reverse

from campaigns.models import Team
from campaigns.services.campaigns import close_campaign
from campaigns.tests.factories import GOOD_SHA, committed_campaign, make_run, make_user
from ledger.models import Deliverable
from tests.adminforms import form_data

ADD = "admin:ledger_deliverable_add"


class SubmittingADeliverableFromTheCampaignPage(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.planner = make_user("pia", team=cls.team)
        cls.viewer = make_user("vic", team=cls.team, role="viewer")
        cls.campaign = committed_campaign(cls.team, cls.planner, title="Ours")
        cls.base_run = make_run(cls.campaign, "base-1")
        cls.theirs = committed_campaign(Team.objects.create(name="vision"), title="Theirs")

    def setUp(self) -> None:
        self.client.force_login(self.planner)

    def add_url(self) -> str:
        return f"{reverse(ADD)}?campaign={self.campaign.pk}"

    def post(self, **fields: str) -> object:
        page = self.client.get(self.add_url())
        data = form_data(page.content.decode(), "deliverable_form")
        data.update(fields)
        return self.client.post(self.add_url(), data)

    def test_the_campaign_page_links_to_the_form_and_counts_the_verdicts(self) -> None:
        page = self.client.get(reverse("admin:campaigns_campaign_change", args=[self.campaign.pk]))
        self.assertContains(page, 'id="submit-deliverable"')
        self.assertContains(page, self.add_url().replace("&", "&amp;"))
        self.assertContains(page, "deliverables: 0 accepted, 0 rejected")

    def test_the_form_starts_with_the_campaign_and_its_corpus(self) -> None:
        data = form_data(self.client.get(self.add_url()).content.decode(), "deliverable_form")
        self.assertEqual(data["campaign"], str(self.campaign.pk))
        self.assertEqual(data["corpus_name"], self.campaign.corpus_name)
        self.assertEqual(data["corpus_revision"], self.campaign.corpus_revision)

    def test_an_accepted_deliverable_is_stored_through_the_service_with_its_files(self) -> None:
        answer = self.post(
            kind="predictions",
            run="base-1",
            files=f"outputs/predictions.jsonl 1024 {GOOD_SHA}\n",
            expected_ids_ok="true",
            reload_verified="true",
        )
        stored = Deliverable.objects.get()
        self.assertRedirects(
            answer,
            reverse("admin:ledger_deliverable_change", args=[stored.pk]),
            fetch_redirect_response=False,
        )
        self.assertTrue(stored.accepted)
        self.assertEqual(stored.run, self.base_run)
        self.assertEqual(stored.submitted_by, self.planner)
        self.assertEqual(
            list(stored.files.values_list("path", "size_bytes", "sha256")),
            [("outputs/predictions.jsonl", 1024, GOOD_SHA)],
        )
        page = self.client.get(answer["Location"])
        self.assertContains(page, "is accepted")
        again = self.client.get(reverse("admin:campaigns_campaign_change", args=[self.campaign.pk]))
        self.assertContains(again, "deliverables: 1 accepted, 0 rejected")

    def test_a_failed_check_is_stored_as_rejected_and_its_reasons_shown(self) -> None:
        answer = self.post(kind="artifact", files=f"outputs/model.safetensors 2048 {GOOD_SHA}")
        stored = Deliverable.objects.get()
        self.assertFalse(stored.accepted)
        page = self.client.get(answer["Location"])
        self.assertContains(page, "stored as rejected")
        self.assertContains(page, "reload not verified")

    def test_a_note_needs_no_reload_or_identifiers(self) -> None:
        self.post(kind="error_analysis", files=f"notes/errors.md 900 {GOOD_SHA}")
        self.assertTrue(Deliverable.objects.get().accepted)

    def test_a_run_of_no_such_id_is_refused_beside_the_run_field_and_nothing_is_stored(
        self,
    ) -> None:
        answer = self.post(kind="predictions", run="nope", files=f"p.jsonl 10 {GOOD_SHA}")
        self.assertEqual(answer.status_code, 200)
        errors = answer.context["adminform"].form.errors
        self.assertIn("no run 'nope' in this campaign", errors["run"][0])
        self.assertFalse(Deliverable.objects.exists())

    def test_a_file_without_size_and_digest_outside_the_runs_artifacts_is_refused(self) -> None:
        answer = self.post(kind="predictions", run="base-1", files="outputs/p.jsonl")
        errors = answer.context["adminform"].form.errors
        self.assertIn("size_bytes and sha256 are required", errors["files"][0])
        self.assertFalse(Deliverable.objects.exists())

    def test_a_malformed_file_line_is_refused_beside_the_files(self) -> None:
        answer = self.post(kind="predictions", files="p.jsonl ten " + GOOD_SHA)
        errors = answer.context["adminform"].form.errors
        self.assertIn("whole number of bytes", errors["files"][0])
        self.assertFalse(Deliverable.objects.exists())

    def test_a_closed_campaign_is_not_offered_and_its_page_has_no_submit_link(self) -> None:
        close_campaign(campaign=self.campaign, acting_user=self.planner, conclusion="done")
        page = self.client.get(reverse("admin:campaigns_campaign_change", args=[self.campaign.pk]))
        self.assertNotContains(page, 'id="submit-deliverable"')
        answer = self.post(kind="predictions", files=f"p.jsonl 10 {GOOD_SHA}")
        self.assertIn("campaign", answer.context["adminform"].form.errors)
        self.assertFalse(Deliverable.objects.exists())

    def test_another_teams_campaign_cannot_be_named(self) -> None:
        answer = self.post(
            campaign=str(self.theirs.pk), kind="predictions", files=f"p.jsonl 10 {GOOD_SHA}"
        )
        self.assertIn("campaign", answer.context["adminform"].form.errors)
        self.assertFalse(Deliverable.objects.exists())

    def test_a_draft_has_no_submit_link(self) -> None:
        from campaigns.tests.factories import make_plannable

        draft = make_plannable(self.team, title="Still a draft")
        page = self.client.get(reverse("admin:campaigns_campaign_change", args=[draft.pk]))
        self.assertNotContains(page, 'id="submit-deliverable"')

    def test_a_viewer_has_no_form_and_no_link(self) -> None:
        self.client.force_login(self.viewer)
        self.assertEqual(self.client.get(self.add_url()).status_code, 403)
        page = self.client.get(reverse("admin:campaigns_campaign_change", args=[self.campaign.pk]))
        self.assertNotContains(page, 'id="submit-deliverable"')

    def test_no_boundary_value_in_any_field_answers_5xx(self) -> None:
        from tests.test_admin_boundaries import BOUNDARIES

        page = self.client.get(self.add_url())
        data = form_data(page.content.decode(), "deliverable_form")
        data.update(kind="predictions", files=f"p.jsonl 10 {GOOD_SHA}")
        for name in ["corpus_name", "corpus_revision", "run", "files", "base_revision", "kind"]:
            for value in [
                *BOUNDARIES,
                "x" * 300,
                *(f"p.jsonl {b} {GOOD_SHA}" for b in [*BOUNDARIES, "9" * 25]),
            ]:
                with self.subTest(field=name, value=value):
                    answer = self.client.post(self.add_url(), {**data, name: value})
                    self.assertLess(answer.status_code, 500)

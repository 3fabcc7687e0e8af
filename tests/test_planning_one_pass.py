"""Planning in one pass (issue 18, item 3): one save of the add page writes the whole plan, a
stage naming its item and the stages it follows from the same unsaved form; a human `analysis`
stage kind; the item's work typed in its own row; commit warns when no item states its work;
a planned decision point keeps its note."""

from __future__ import annotations

import re
from typing import Any

from django.test import TestCase
from django.urls import reverse

from campaigns.models import Campaign, DecisionPoint, Stage, Team
from campaigns.services.plans import commit_plan
from campaigns.tests.factories import make_plannable, make_user
from tests.adminforms import form_data


class PlanningInOnePass(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.planner = make_user("pia", team=cls.team)

    def setUp(self) -> None:
        self.client.force_login(self.planner)
        self.url = reverse("admin:campaigns_campaign_add")
        self.data = form_data(self.client.get(self.url).content.decode(), "campaign_form")

    def plan(self, **extra: Any) -> dict[str, Any]:
        data = {
            **self.data,
            "title": "Does LoRA rank 16 beat rank 8?",
            "question": "Does rank 16 beat rank 8 by 1 F1 within 72 h?",
            "corpus_name": "tickets",
            "corpus_revision": "r1",
            "items-TOTAL_FORMS": "2",
            "items-0-name": "rank 8",
            "items-0-role": "baseline",
            "items-0-tier": "mandatory",
            "items-0-planned_hours": "10",
            "items-0-tokens": "2000000000",
            "items-1-name": "rank 16",
            "items-1-role": "variant",
            "items-1-tier": "useful",
            "items-1-planned_hours": "12",
            "items-1-prep_hours": "0",
            "stop_rules-0-kind": "non_finite_loss",
            "stop_rules-0-metric": "loss",
            "stages-TOTAL_FORMS": "3",
            "stages-0-name": "prepare",
            "stages-0-kind": "human_prep",
            "stages-0-planned_hours": "2",
            "stages-1-name": "train rank 8",
            "stages-1-kind": "training",
            "stages-1-machine": "on",
            "stages-1-resource": "gpu-a",
            "stages-1-item_name": "rank 8",
            "stages-1-after": "prepare",
            "stages-1-planned_hours": "10",
            "stages-2-name": "read the results",
            "stages-2-kind": "analysis",
            "stages-2-after": "prepare, train rank 8",
            "stages-2-planned_hours": "3",
        }
        data.pop("stages-0-machine", None)  # human time: the box unticked
        data.update(extra)
        return {k: v for k, v in data.items() if v is not None}

    def test_one_save_writes_items_stages_their_links_and_the_item_work(self) -> None:
        answer = self.client.post(self.url, self.plan())
        errors = re.findall(r'id="error-summary".*?</ul>', answer.content.decode(), re.S)
        self.assertEqual(answer.status_code, 302, errors)
        campaign = Campaign.objects.get(title="Does LoRA rank 16 beat rank 8?")
        train = Stage.objects.get(campaign=campaign, name="train rank 8")
        self.assertEqual(train.variant.name, "rank 8")
        self.assertEqual([s.name for s in train.depends_on.all()], ["prepare"])
        read = Stage.objects.get(campaign=campaign, name="read the results")
        self.assertEqual((read.kind, read.machine), ("analysis", False))
        self.assertEqual(sorted(s.name for s in read.depends_on.all()), ["prepare", "train rank 8"])
        self.assertEqual(campaign.items.get(name="rank 8").tokens, 2_000_000_000)
        page = self.client.get(reverse("admin:campaigns_campaign_change", args=[campaign.pk]))
        self.assertContains(page, "The calendar takes 15 h of a 72 h window")

    def test_a_name_that_is_not_on_the_page_is_a_field_error_and_nothing_is_stored(self) -> None:
        answer = self.client.post(self.url, self.plan(**{"stages-1-item_name": "rank 4"}))
        self.assertEqual(answer.status_code, 200)
        self.assertContains(answer, "no item named &#x27;rank 4&#x27; on this page")
        self.assertFalse(Campaign.objects.exists())

    def test_an_analysis_stage_is_human_time(self) -> None:
        answer = self.client.post(
            self.url, self.plan(**{"stages-2-machine": "on", "stages-2-resource": "gpu-a"})
        )
        self.assertEqual(answer.status_code, 200)
        self.assertContains(answer, "analysis is human time")
        self.assertFalse(Campaign.objects.exists())

    def test_commit_warns_when_no_item_states_its_work(self) -> None:
        campaign = make_plannable(self.team, title="no work stated")
        page = self.client.get(reverse("admin:campaigns_campaign_commit", args=[campaign.pk]))
        self.assertContains(page, "No item states its work")

    def test_a_planned_decision_point_keeps_its_note(self) -> None:
        campaign = make_plannable(self.team, title="committed")
        commit_plan(campaign=campaign, acting_user=self.planner)
        url = reverse("admin:campaigns_campaign_change", args=[campaign.pk])
        data = form_data(self.client.get(url).content.decode(), "campaign_form")
        data.update(
            {
                "decisions-0-label": "after the pilot",
                "decisions-0-outcome": "pending",
                "decisions-0-rationale": "weigh the pilot's F1 against its hours",
            }
        )
        self.assertEqual(self.client.post(url, data).status_code, 302)
        point = DecisionPoint.objects.get(campaign=campaign)
        self.assertEqual(
            (point.outcome, point.rationale), ("pending", "weigh the pilot's F1 against its hours")
        )
        data = form_data(self.client.get(url).content.decode(), "campaign_form")
        data["decisions-0-rationale"] = "and the cost per accepted deliverable"
        self.assertEqual(self.client.post(url, data).status_code, 302)
        point.refresh_from_db()
        self.assertEqual(point.rationale, "and the cost per accepted deliverable")

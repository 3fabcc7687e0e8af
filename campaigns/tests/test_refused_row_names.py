"""A stage row that follows a row refused on the same page is told that row was refused, not
that no such stage exists (seen in the newcomer's browser test: one slip gave two errors, the
second one false)."""

from __future__ import annotations

from django.test import TestCase
from django.urls import reverse

from campaigns.models import Campaign, Team
from campaigns.tests.factories import make_user
from tests.adminforms import form_data


class ARowFollowingARefusedRow(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.planner = make_user("pia", team=Team.objects.create(name="nlp"))

    def test_is_told_the_row_it_follows_was_refused(self) -> None:
        self.client.force_login(self.planner)
        url = reverse("admin:campaigns_campaign_add")
        data = form_data(self.client.get(url).content.decode(), "campaign_form")
        data.update(
            {
                "title": "Rank 16 or rank 8?",
                "question": "Does rank 16 beat rank 8 by 1 F1?",
                "corpus_name": "tickets",
                "corpus_revision": "r1",
                "items-0-name": "rank 8",
                "items-0-role": "baseline",
                "items-0-tier": "mandatory",
                "items-0-planned_hours": "10",
                "stages-TOTAL_FORMS": "2",
                "stages-0-name": "train rank 8",
                "stages-0-kind": "training",
                "stages-0-machine": "on",
                "stages-0-resource": "gpu-a",
                "stages-0-item_name": "rank 61",  # the slip
                "stages-0-planned_hours": "10",
                "stages-1-name": "read the results",
                "stages-1-kind": "analysis",
                "stages-1-after": "train rank 8",
                "stages-1-planned_hours": "2",
            }
        )
        data.pop("stages-1-machine", None)
        answer = self.client.post(url, data)
        self.assertEqual(answer.status_code, 200)
        self.assertContains(answer, "no item named &#x27;rank 61&#x27; on this page")
        self.assertContains(
            answer, "the stage &#x27;train rank 8&#x27; on this page was refused: correct its row"
        )
        self.assertNotContains(answer, "no stage named")
        self.assertFalse(Campaign.objects.exists())

"""GET /campaigns/{id}/ledger/summary/ with the seed's figures (docs/domain.md §13)."""

from __future__ import annotations

from django.test import TestCase

from campaigns.models import Campaign, Team
from campaigns.tests.factories import as_user, committed_campaign, deliverable_body, make_user
from ledger.models import LedgerEntry


class SeedFigureTests(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.planner = make_user("pia", team=cls.team)
        cls.campaign = committed_campaign(cls.team)

    def setUp(self) -> None:
        self.api = as_user(self.planner)
        self.base = f"/api/v1/campaigns/{self.campaign.pk}"

    def deliver(self, **body: object) -> dict:
        answer = self.api.post(
            f"{self.base}/deliverables/", deliverable_body(**body), format="json"
        )
        self.assertEqual(answer.status_code, 201, answer.json())
        return answer.json()

    def summary(self) -> dict:
        answer = self.api.get(f"{self.base}/ledger/summary/")
        self.assertEqual(answer.status_code, 200, answer.json())
        return answer.json()

    def test_a_47_14_plan_with_two_distinct_accepted_corpora_costs_23_57_per_corpus(self) -> None:
        self.deliver(corpus="tickets-es")
        self.deliver(corpus="tickets-pt")
        self.assertEqual(
            self.summary(),
            {
                "currency": "USD",
                "rental": "47.14",
                "included": "0.00",
                "external": "0.00",
                "incurred": "47.14",
                "accepted_deliverables": 2,
                "cost_per_accepted": "23.57",
                "ratio": "defined",
                "undefined_reason": None,
                "rejection_reasons": [],
                "conclusion": None,
            },
        )

    def test_the_same_corpus_accepted_five_times_counts_once(self) -> None:
        for _ in range(5):
            self.deliver(corpus="tickets-es")
        summary = self.summary()
        self.assertEqual(summary["accepted_deliverables"], 1)
        self.assertEqual(summary["cost_per_accepted"], "47.14")

    def test_another_revision_of_a_corpus_is_another_corpus(self) -> None:
        self.deliver(corpus="tickets-es", revision="r1")
        self.deliver(corpus="tickets-es", revision="r2")
        self.assertEqual(self.summary()["cost_per_accepted"], "23.57")

    def test_nothing_accepted_leaves_the_ratio_undefined_with_the_full_cost_and_the_causes(
        self,
    ) -> None:
        self.deliver(files=[{"path": "/tmp/preds.jsonl", "size_bytes": 0, "sha256": "a" * 64}])
        summary = self.summary()
        self.assertEqual(summary["ratio"], "undefined")
        self.assertIsNone(summary["cost_per_accepted"])
        self.assertEqual(summary["incurred"], "47.14")
        self.assertEqual(summary["accepted_deliverables"], 0)
        self.assertTrue(summary["undefined_reason"])
        reasons = " ".join(summary["rejection_reasons"])
        self.assertIn("empty file: /tmp/preds.jsonl", reasons)
        self.assertIn("temporary directory", reasons)

    def test_nothing_submitted_is_undefined_too_never_zero(self) -> None:
        summary = self.summary()
        self.assertEqual(summary["ratio"], "undefined")
        self.assertIsNone(summary["cost_per_accepted"])
        self.assertEqual(summary["incurred"], "47.14")

    def test_external_costs_stand_apart_from_the_incurred_cost(self) -> None:
        for kind, amount in (("external", "12.00"), ("included", "3.00")):
            answer = self.api.post(
                f"{self.base}/ledger/",
                {"kind": kind, "description": kind, "amount": amount, "currency": "USD"},
                format="json",
            )
            self.assertEqual(answer.status_code, 201)
        self.deliver(corpus="tickets-es")
        summary = self.summary()
        self.assertEqual(summary["external"], "12.00")
        self.assertEqual(summary["included"], "3.00")
        self.assertEqual(summary["incurred"], "50.14")
        self.assertEqual(summary["cost_per_accepted"], "50.14")

    def test_the_two_3_day_lots_cost_94_28(self) -> None:
        campaign = committed_campaign(self.team, lots=2, title="Two lots")
        summary = self.api.get(f"/api/v1/campaigns/{campaign.pk}/ledger/summary/").json()
        self.assertEqual(summary["rental"], "94.28")
        self.assertEqual(summary["incurred"], "94.28")

    def test_a_research_decision_reports_its_conclusion_instead_of_a_unit(self) -> None:
        Campaign.objects.filter(pk=self.campaign.pk).update(
            conclusion="No variant beats the baseline by 1 F1: keep the baseline."
        )
        summary = self.summary()
        self.assertEqual(summary["ratio"], "undefined")
        self.assertEqual(
            summary["conclusion"], "No variant beats the baseline by 1 F1: keep the baseline."
        )

    def test_mixed_currencies_are_refused_rather_than_summed(self) -> None:
        # A lot priced in another currency than the campaign's reaches the ledger at commit
        # (post_reserved_lots keeps the lot's currency); the API itself refuses such entries.
        campaign = committed_campaign(self.team, lots=0, title="Mixed")
        LedgerEntry.objects.create(
            campaign=campaign, kind="rental", description="EUR lot", amount="80.00", currency="EUR"
        )
        answer = self.api.get(f"/api/v1/campaigns/{campaign.pk}/ledger/summary/")
        self.assertEqual(answer.status_code, 409)
        self.assertIn("never summed", answer.json()["detail"])

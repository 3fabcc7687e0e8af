"""The ledger API: append-only entries in exact decimals, reversals, tenancy and roles."""

from __future__ import annotations

from decimal import Decimal

from django.test import TestCase

from campaigns.models import Team
from campaigns.services.plans import commit_plan
from campaigns.tests.factories import as_user, committed_campaign, ingest_client, make_user
from ledger.models import LedgerEntry, LedgerImmutable


def ledger_url(campaign_id: int) -> str:
    return f"/api/v1/campaigns/{campaign_id}/ledger/"


class LedgerApiTests(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.other = Team.objects.create(name="vision")
        cls.planner = make_user("pia", team=cls.team, role="planner")
        cls.viewer = make_user("vic", team=cls.team, role="viewer")
        cls.outsider = make_user("otto", team=cls.other, role="owner")
        cls.campaign = committed_campaign(cls.team)
        cls.rental = LedgerEntry.objects.get(campaign=cls.campaign, kind="rental")

    def setUp(self) -> None:
        self.api = as_user(self.planner)

    def post(self, body: dict, client=None):  # type: ignore[no-untyped-def]
        return (client or self.api).post(ledger_url(self.campaign.pk), body, format="json")

    def test_it_appends_an_included_expense_as_an_exact_decimal_string(self) -> None:
        answer = self.post(
            {"kind": "included", "description": "storage", "amount": "12.10", "currency": "USD"}
        )
        self.assertEqual(answer.status_code, 201, answer.json())
        self.assertEqual(answer.json()["amount"], "12.10")
        self.assertEqual(answer.json()["created_by"], "pia")
        entry = LedgerEntry.objects.get(pk=answer.json()["id"])
        self.assertEqual(entry.amount, Decimal("12.10"))

    def test_it_lists_the_rental_entry_that_commit_posted(self) -> None:
        answer = self.api.get(ledger_url(self.campaign.pk))
        self.assertEqual(answer.status_code, 200)
        rows = answer.json()["results"]
        self.assertEqual(
            [(r["kind"], r["amount"], r["currency"]) for r in rows], [("rental", "47.14", "USD")]
        )
        self.assertIsNotNone(rows[0]["reservation"])

    def test_it_refuses_a_json_float_and_names_the_amount(self) -> None:
        answer = self.post(
            {"kind": "included", "description": "storage", "amount": 12.1, "currency": "USD"}
        )
        self.assertEqual(answer.status_code, 400)
        self.assertIn("amount", answer.json())
        self.assertIn("decimal string", answer.json()["amount"][0])
        self.assertFalse(LedgerEntry.objects.filter(description="storage").exists())

    def test_it_refuses_a_json_integer_too(self) -> None:
        answer = self.post(
            {"kind": "included", "description": "storage", "amount": 12, "currency": "USD"}
        )
        self.assertEqual(answer.status_code, 400)
        self.assertIn("amount", answer.json())

    def test_it_refuses_more_cents_than_money_has_rather_than_rounding(self) -> None:
        answer = self.post(
            {"kind": "included", "description": "x", "amount": "1.005", "currency": "USD"}
        )
        self.assertEqual(answer.status_code, 400)
        self.assertIn("amount", answer.json())

    def test_it_refuses_nan_and_infinity_strings(self) -> None:
        for token in ("NaN", "Infinity", "-Infinity", "abc"):
            with self.subTest(token=token):
                answer = self.post(
                    {"kind": "included", "description": "x", "amount": token, "currency": "USD"}
                )
                self.assertEqual(answer.status_code, 400)
                self.assertIn("amount", answer.json())

    def test_it_refuses_another_currency_than_the_campaigns(self) -> None:
        answer = self.post(
            {"kind": "external", "description": "annotators", "amount": "30.00", "currency": "EUR"}
        )
        self.assertEqual(answer.status_code, 400)
        self.assertIn("currency", answer.json())
        self.assertIn("never summed", answer.json()["currency"][0])

    def test_it_refuses_a_negative_amount_and_points_to_reversals(self) -> None:
        answer = self.post(
            {"kind": "included", "description": "refund", "amount": "-5.00", "currency": "USD"}
        )
        self.assertEqual(answer.status_code, 400)
        self.assertIn("reversal", answer.json()["amount"][0])

    def test_it_names_every_missing_field_of_a_plain_entry(self) -> None:
        answer = self.post({})
        self.assertEqual(answer.status_code, 400)
        self.assertLessEqual({"kind", "description", "amount", "currency"}, set(answer.json()))

    def test_a_retried_post_with_its_idempotency_key_appends_once(self) -> None:
        body = {"kind": "included", "description": "disk", "amount": "2.00", "currency": "USD"}
        key = {"HTTP_IDEMPOTENCY_KEY": "6f1d8a52-0c55-4a43-9a0e-5b7f0c1e2d3a"}
        first = self.api.post(ledger_url(self.campaign.pk), body, format="json", **key)
        again = self.api.post(ledger_url(self.campaign.pk), body, format="json", **key)
        self.assertEqual((first.status_code, again.status_code), (201, 201))
        self.assertEqual(first.json(), again.json())
        self.assertEqual(LedgerEntry.objects.filter(description="disk").count(), 1)

    def test_put_patch_and_delete_answer_405(self) -> None:
        url = ledger_url(self.campaign.pk)
        detail = f"{url}{self.rental.pk}/"
        for method in ("put", "patch", "delete"):
            for target in (url, detail):
                with self.subTest(method=method, url=target):
                    answer = getattr(self.api, method)(target, {"amount": "0.00"}, format="json")
                    self.assertEqual(answer.status_code, 405)
        self.rental.refresh_from_db()
        self.assertEqual(self.rental.amount, Decimal("47.14"))

    def test_a_reversal_negates_the_amount_and_points_at_the_entry(self) -> None:
        answer = self.post({"reverses": self.rental.pk, "description": "lot cancelled"})
        self.assertEqual(answer.status_code, 201, answer.json())
        body = answer.json()
        self.assertEqual(
            (body["kind"], body["amount"], body["currency"], body["reverses"]),
            ("rental", "-47.14", "USD", self.rental.pk),
        )
        listed = self.api.get(ledger_url(self.campaign.pk)).json()["results"]
        self.assertEqual(listed[0]["reversed_by"], body["id"])
        summary = self.api.get(ledger_url(self.campaign.pk) + "summary/").json()
        self.assertEqual(summary["rental"], "0.00")

    def test_a_reversal_may_state_its_amount_only_as_the_negation(self) -> None:
        wrong = self.post({"reverses": self.rental.pk, "amount": "47.14"})
        self.assertEqual(wrong.status_code, 400)
        self.assertIn("amount", wrong.json())
        right = self.post(
            {"reverses": self.rental.pk, "amount": "-47.14", "kind": "rental", "currency": "USD"}
        )
        self.assertEqual(right.status_code, 201, right.json())

    def test_an_entry_is_reversed_once(self) -> None:
        self.assertEqual(self.post({"reverses": self.rental.pk}).status_code, 201)
        again = self.post({"reverses": self.rental.pk})
        self.assertEqual(again.status_code, 400)
        self.assertIn("already reversed", again.json()["reverses"][0])
        self.assertEqual(LedgerEntry.objects.filter(reverses=self.rental).count(), 1)

    def test_a_reversal_of_a_reversal_is_refused(self) -> None:
        reversal = self.post({"reverses": self.rental.pk}).json()
        answer = self.post({"reverses": reversal["id"]})
        self.assertEqual(answer.status_code, 400)
        self.assertIn("itself a reversal", answer.json()["reverses"][0])

    def test_reversing_an_entry_of_another_campaign_is_refused_by_field(self) -> None:
        elsewhere = committed_campaign(self.other, title="Theirs")
        theirs = LedgerEntry.objects.get(campaign=elsewhere)
        answer = self.post({"reverses": theirs.pk})
        self.assertEqual(answer.status_code, 400)
        self.assertIn("reverses", answer.json())

    def test_another_teams_campaign_is_404_for_reads_and_writes(self) -> None:
        outsider = as_user(self.outsider)
        self.assertEqual(outsider.get(ledger_url(self.campaign.pk)).status_code, 404)
        self.assertEqual(outsider.get(ledger_url(self.campaign.pk) + "summary/").status_code, 404)
        answer = self.post(
            {"kind": "included", "description": "x", "amount": "1.00", "currency": "USD"},
            client=outsider,
        )
        self.assertEqual(answer.status_code, 404)
        self.assertEqual(LedgerEntry.objects.filter(campaign=self.campaign).count(), 1)

    def test_a_viewer_reads_but_cannot_post(self) -> None:
        viewer = as_user(self.viewer)
        self.assertEqual(viewer.get(ledger_url(self.campaign.pk)).status_code, 200)
        answer = self.post(
            {"kind": "included", "description": "x", "amount": "1.00", "currency": "USD"},
            client=viewer,
        )
        self.assertEqual(answer.status_code, 403)

    def test_an_ingest_key_cannot_touch_the_ledger(self) -> None:
        key = ingest_client(self.campaign)
        self.assertEqual(key.get(ledger_url(self.campaign.pk)).status_code, 403)
        answer = self.post(
            {"kind": "included", "description": "x", "amount": "1.00", "currency": "USD"},
            client=key,
        )
        self.assertEqual(answer.status_code, 403)
        self.assertEqual(key.get(ledger_url(self.campaign.pk) + "summary/").status_code, 403)

    def test_anonymous_callers_are_refused(self) -> None:
        from rest_framework.test import APIClient

        self.assertIn(APIClient().get(ledger_url(self.campaign.pk)).status_code, (401, 403))


class AppendOnlyModelTests(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.campaign = committed_campaign(cls.team, lots=2)

    def test_two_3_day_lots_post_94_28(self) -> None:
        entry = LedgerEntry.objects.get(campaign=self.campaign)
        self.assertEqual(entry.amount, Decimal("94.28"))
        self.assertEqual(entry.kind, "rental")

    def test_the_model_refuses_to_save_an_existing_entry_again(self) -> None:
        entry = LedgerEntry.objects.get(campaign=self.campaign)
        entry.amount = Decimal("1.00")
        with self.assertRaises(LedgerImmutable):
            entry.save()
        entry.refresh_from_db()
        self.assertEqual(entry.amount, Decimal("94.28"))

    def test_the_model_refuses_to_delete_an_entry(self) -> None:
        entry = LedgerEntry.objects.get(campaign=self.campaign)
        with self.assertRaises(LedgerImmutable):
            entry.delete()
        self.assertTrue(LedgerEntry.objects.filter(pk=entry.pk).exists())

    def test_posting_the_reserved_lots_again_posts_nothing(self) -> None:
        from ledger.services import post_reserved_lots

        self.assertEqual(post_reserved_lots(campaign=self.campaign), [])
        self.assertEqual(LedgerEntry.objects.filter(campaign=self.campaign).count(), 1)


class CommitPostsTheLotsOnceTests(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")

    def test_a_refused_commit_posts_nothing_and_its_retry_posts_each_lot_once(self) -> None:
        from campaigns.models import CommitRefused, PlanFrozen, StopRule
        from campaigns.tests.factories import make_plannable
        from catalog.models import RentalPlan

        campaign = make_plannable(self.team)
        StopRule.objects.filter(campaign=campaign).delete()
        plan = RentalPlan.objects.get(provider="IteraGPU", name="RTX 4090, 3 days")
        campaign.lots.create(plan=plan, quantity=1)
        campaign.lots.create(plan=plan, quantity=1)
        with self.assertRaises(CommitRefused):
            commit_plan(campaign=campaign)
        self.assertFalse(LedgerEntry.objects.filter(campaign=campaign).exists())
        StopRule.objects.create(campaign=campaign, kind="non_finite_loss", metric="loss")
        commit_plan(campaign=campaign)
        with self.assertRaises(PlanFrozen):
            commit_plan(campaign=campaign)
        amounts = list(
            LedgerEntry.objects.filter(campaign=campaign).values_list("amount", flat=True)
        )
        self.assertEqual(amounts, [Decimal("47.14"), Decimal("47.14")])
        self.assertEqual(sum(amounts), Decimal("94.28"))

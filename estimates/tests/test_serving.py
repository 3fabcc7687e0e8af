"""POST /estimates/serving/: "train once, serve many" (docs/domain.md §10)."""

from __future__ import annotations

from typing import Any

from django.test import TestCase

from campaigns.models import Team
from campaigns.tests.factories import make_user, token_header

URL = "/api/v1/estimates/serving/"

# 1e6 requests x 500 tokens at 2,500 tokens/s per GPU: 55.56 busy GPU-hours a month.
BODY: dict[str, Any] = {
    "requests_per_month": 1e6,
    "tokens_per_request": 500,
    "tokens_per_second_per_gpu": 2500,
    "months": 24,
    "hourly_rate_per_gpu": "2.00",
    "currency": "USD",
    "training_cost": "1000.00",
}


class ServingTests(TestCase):
    planner: Any

    @classmethod
    def setUpTestData(cls) -> None:
        cls.planner = make_user("sam", team=Team.objects.create(name="nlp"), role="planner")

    def post(self, body: Any) -> Any:
        return self.client.post(
            URL, body, content_type="application/json", **token_header(self.planner)
        )

    def ok(self, body: Any) -> dict[str, Any]:
        answer = self.post(body)
        self.assertEqual(answer.status_code, 200, answer.content)
        result: dict[str, Any] = answer.json()
        return result

    def test_busy_billing_pays_the_gpu_hours_serving_and_passes_training_in_month_10(
        self,
    ) -> None:
        # 5e8 tokens / 2,500 / 3,600 = 55.556 h x 2.00 = 111.11 USD a month; 9 months are
        # 999.99, month 10 (1,111.10) passes the 1,000.00 training.
        result = self.ok(BODY)
        self.assertAlmostEqual(result["gpu_hours_per_month"], 55.5556, places=3)
        self.assertEqual(result["monthly_cost"], {"amount": "111.11", "currency": "USD"})
        self.assertEqual(len(result["cumulative"]), 24)
        self.assertEqual(result["cumulative"][8]["amount"], "999.99")
        self.assertEqual(result["month_exceeding_training"], 10)
        self.assertIsNone(result["local"])

    def test_always_on_pays_730_hours_per_gpu_whatever_the_load(self) -> None:
        result = self.ok({**BODY, "billing": "always_on", "gpus": 2})
        self.assertEqual(result["monthly_cost"]["amount"], "2920.00")
        self.assertAlmostEqual(result["load"], 55.5556 / 1460, places=5)

    def test_owning_breaks_even_when_its_savings_repay_the_purchase(self) -> None:
        # Local: 2,000.00 up front, 300 W for the same 55.56 h at 0.30/kWh = 5.00 a month;
        # saving 106.11 a month: ceil(2,000 / 106.11) = month 19, inside 36 months.
        body = {
            **BODY,
            "local": {
                "purchase_price": "2000.00",
                "power_watts": 300,
                "electricity_per_kwh": "0.30",
                "lifetime_months": 36,
            },
        }
        local = self.ok(body)["local"]
        self.assertEqual(local["monthly_cost"]["amount"], "5.00")
        self.assertEqual(local["break_even_month"], 19)
        self.assertTrue(local["within_lifetime"])
        self.assertEqual(local["cumulative"][0]["amount"], "2005.00")

    def test_out_of_range_unknown_or_float_money_inputs_are_a_400_naming_them(self) -> None:
        for change, field in (
            ({"months": 10_000}, "months"),
            ({"tokens_per_second_per_gpu": 0}, "tokens_per_second_per_gpu"),
            ({"hourly_rate_per_gpu": 2.0}, "hourly_rate_per_gpu"),
            ({"gpu": "A100"}, "gpu"),
            (
                {"hourly_rate_per_gpu": "9999999999.0000", "requests_per_month": 1e15},
                "hourly_rate_per_gpu",
            ),
        ):
            with self.subTest(change=change):
                answer = self.post({**BODY, **change})
                self.assertEqual(answer.status_code, 400, answer.content)
                self.assertIn(field, answer.json())

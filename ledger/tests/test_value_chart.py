"""Quality per dollar (docs/domain.md §18.6): the pure scatter, then the closing report's
section through the API's ingest writes on the real database."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.test import SimpleTestCase, TestCase
from hypothesis import given
from hypothesis import strategies as st

from campaigns.domain.metric_direction import loss_like
from campaigns.models import PlannedItem, Team
from campaigns.tests.factories import committed_campaign, ingest_client
from ledger.charts.quality_per_dollar_chart import ItemValue, best_in_words, value_chart


class LossLikeTests(SimpleTestCase):
    def test_a_rule_stopping_on_growth_makes_its_metric_lower_is_better(self) -> None:
        self.assertTrue(loss_like("perplexity", "gt"))
        self.assertTrue(loss_like("perplexity", "ge"))

    def test_a_rule_stopping_on_a_fall_makes_its_metric_higher_is_better(self) -> None:
        self.assertFalse(loss_like("val_loss_inverse", "lt"))
        self.assertFalse(loss_like("accuracy", "le"))

    def test_without_a_rule_the_name_decides(self) -> None:
        self.assertTrue(loss_like("val_loss"))
        self.assertFalse(loss_like("bleu"))
        self.assertEqual(
            best_in_words("loss", True), "best = the lowest loss any of the item's runs logged"
        )


class ValueChartTests(SimpleTestCase):
    def test_the_cheaper_better_item_sits_up_and_to_the_left(self) -> None:
        chart = value_chart(
            [
                ItemValue("cheap good", Decimal("10.00"), 1.5),
                ItemValue("dear bad", Decimal("40.00"), 2.5),
                ItemValue("not run", Decimal("0"), None),
            ],
            "loss",
            True,
            "USD",
        )
        assert chart is not None
        good, bad = chart.dots
        self.assertEqual([d.label for d in chart.dots], ["cheap good", "dear bad"])
        self.assertLess(good.x, bad.x)
        self.assertLess(good.y, bad.y)  # SVG y grows downwards: the better value is on top
        self.assertIn("40.00 USD", [text for _x, _y, text in chart.axis])

    def test_higher_is_better_puts_the_highest_value_on_top(self) -> None:
        chart = value_chart(
            [ItemValue("a", Decimal("1"), 0.9), ItemValue("b", Decimal("1"), 0.5)],
            "accuracy",
            False,
            "EUR",
        )
        assert chart is not None
        self.assertLess(chart.dots[0].y, chart.dots[1].y)

    def test_nothing_to_compare_draws_nothing(self) -> None:
        self.assertIsNone(value_chart([ItemValue("a", Decimal("3"), None)], "loss", True, "USD"))

    @given(
        st.lists(
            st.tuples(
                st.decimals(min_value=0, max_value=10**6, places=2),
                st.floats(min_value=-1e6, max_value=1e6),
            ),
            min_size=1,
            max_size=12,
        ),
        st.booleans(),
    )
    def test_every_dot_lies_inside_the_drawing(
        self, rows: list[tuple[Decimal, float]], lower: bool
    ) -> None:
        items = [ItemValue(f"i{n}", cost, best) for n, (cost, best) in enumerate(rows)]
        chart = value_chart(items, "loss", lower, "USD")
        assert chart is not None
        for dot in chart.dots:
            self.assertTrue(0 <= dot.x <= chart.width)
            self.assertTrue(0 <= dot.y <= chart.height)


@pytest.mark.postgres
class ReportValueTests(TestCase):
    def test_the_closing_report_sets_each_items_best_loss_against_its_cost(self) -> None:
        from ledger.rendering.closing_report import render_html
        from ledger.selectors.closing_report import collect

        campaign = committed_campaign(Team.objects.create(name="nlp"))
        loop = ingest_client(campaign)
        baseline = PlannedItem.objects.get(campaign=campaign, name="baseline")
        for run_id, item, losses, hours in (
            ("r-base", baseline, [3.0, 2.0, 2.5], "10"),
            ("r-base-2", baseline, [1.8], "5"),
        ):
            opened = loop.post(
                f"/api/v1/campaigns/{campaign.pk}/runs/",
                {"run_id": run_id, "variant": item.pk},
                format="json",
            )
            self.assertEqual(opened.status_code, 201, opened.json())
            points = [{"name": "loss", "step": s, "value": v} for s, v in enumerate(losses)]
            loop.post(f"/api/v1/runs/{run_id}/metrics/", {"points": points}, format="json")
            loop.post(
                f"/api/v1/runs/{run_id}/finish/",
                {"status": "completed", "observed_hours": hours},
                format="json",
            )
        data = collect(campaign)
        value = data["value_for_money"]
        self.assertEqual(value["metric"], "loss")
        self.assertTrue(value["lower_is_better"])
        rows = {row["item"]: row for row in value["items"]}
        # 15 h × 1 GPU × 0.6547 USD per GPU-hour: 6.55 + 3.27 (each run rounded to the cent).
        self.assertEqual(
            rows["baseline"], {"item": "baseline", "cost": "9.82", "best": 1.8, "pilot": None}
        )
        self.assertEqual(
            rows["variant A"], {"item": "variant A", "cost": "0.00", "best": None, "pilot": None}
        )
        html = render_html(data)
        self.assertIn('id="value-chart"', html)
        self.assertIn("baseline: loss 1.8 for 9.82 USD", html)

        from ledger.templatetags.ledger_spend import money_panel

        # The campaign page's money panel draws the same scatter, costs so far.
        self.assertIn("baseline: loss 1.8 for 9.82 USD", money_panel(campaign))


@pytest.mark.postgres
class FullRunsOfLiveItemsTests(TestCase):
    """A 36-second pilot of a cut item must not look like the best buy (issue 33 item 5)."""

    def test_only_full_runs_of_items_not_cut_count_and_pilots_are_drawn_apart(self) -> None:
        from campaigns.services.decisions import record_decision
        from ledger.rendering.value_chart import value_chart_html
        from ledger.selectors.quality_per_dollar import value_for_money

        campaign = committed_campaign(Team.objects.create(name="nlp"))
        loop = ingest_client(campaign)
        baseline = PlannedItem.objects.get(campaign=campaign, name="baseline")
        variant = PlannedItem.objects.get(campaign=campaign, name="variant A")
        for run_id, item, kind, loss, hours in (
            ("base-full", baseline, "full", 2.0, "10"),
            ("base-pilot", baseline, "pilot", 1.0, "1"),
            ("a-pilot", variant, "pilot", 0.2, "0.01"),
        ):
            opened = loop.post(
                f"/api/v1/campaigns/{campaign.pk}/runs/",
                {"run_id": run_id, "variant": item.pk, "kind": kind},
                format="json",
            )
            self.assertEqual(opened.status_code, 201, opened.json())
            body = {"points": [{"name": "loss", "step": 1, "value": loss}]}
            loop.post(f"/api/v1/runs/{run_id}/metrics/", body, format="json")
            loop.post(
                f"/api/v1/runs/{run_id}/finish/",
                {"status": "completed", "observed_hours": hours},
                format="json",
            )
        record_decision(
            campaign=campaign, outcome="cut", rationale="pilot too slow", cut_variants=[variant]
        )
        value = value_for_money(campaign)
        self.assertEqual([row["item"] for row in value["items"]], ["baseline"])
        self.assertEqual(value["cut_items"], ["variant A"])
        (row,) = value["items"]
        # The full run's 2.0, not the pilot's 1.0; the pilot's own figures beside it.
        self.assertEqual(row["best"], 2.0)
        self.assertEqual(row["cost"], "6.55")
        self.assertEqual(row["pilot"], {"cost": "0.65", "best": 1.0})
        html = value_chart_html(value)
        self.assertIn("baseline: loss 2 for 6.55 USD", html)
        self.assertIn("baseline (pilot): loss 1 for 0.65 USD", html)
        self.assertNotIn("variant A", html)


class PilotDotsTests(SimpleTestCase):
    def test_a_pilot_is_a_hollow_dot_labelled_apart(self) -> None:
        chart = value_chart(
            [ItemValue("a", Decimal("5"), 1.0), ItemValue("a", Decimal("1"), 0.5, pilot=True)],
            "loss",
            True,
            "USD",
        )
        assert chart is not None
        full, pilot = chart.dots
        self.assertEqual((full.label, full.pilot), ("a", False))
        self.assertEqual((pilot.label, pilot.pilot), ("a (pilot)", True))

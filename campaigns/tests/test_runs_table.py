"""The runs table (docs/domain.md §5.10): its columns and groups as pure rules, then its reads on
the real database: sorted by a metric's best in the metric's own direction, filtered, scoped to
the caller's teams, and a page's statements the same at 3 and 30 runs and 1 and 6 metrics."""

from __future__ import annotations

import math
import statistics

from django.core.exceptions import ValidationError
from django.db import connection
from django.test import SimpleTestCase, TestCase
from django.test.utils import CaptureQueriesContext
from hypothesis import given
from hypothesis import strategies as st

from campaigns.domain import runs_table as table
from campaigns.models import PlannedItem, Run, Team
from campaigns.selectors import runs_table as reads
from campaigns.services.run_table import remember_columns
from campaigns.tests.factories import add_points, committed_campaign, make_run, make_user


class ColumnsTests(SimpleTestCase):
    def test_a_key_names_a_field_a_metrics_latest_or_best_or_a_config_key(self) -> None:
        self.assertEqual(table.parse_column("field:status").label, "Status")
        loss = table.parse_column("metric:eval/loss:best")
        self.assertEqual(
            (loss.name, loss.which, loss.label), ("eval/loss", "best", "eval/loss (best)")
        )
        self.assertEqual(table.parse_column("config:lr").name, "lr")
        for bad in ("status", "field:nope", "metric:loss", "metric:loss:mean", "other:x", ""):
            with self.assertRaises(table.ColumnRefused, msg=bad):
                table.parse_column(bad)

    def test_the_runs_name_comes_first_once_and_columns_are_not_repeated(self) -> None:
        keys = [c.key for c in table.parse_columns(["config:lr", "field:name", "config:lr"])]
        self.assertEqual(keys, ["field:name", "config:lr"])

    def test_an_unknown_sort_falls_back_to_the_newest_first(self) -> None:
        columns = table.parse_columns(["metric:loss:best"])
        self.assertEqual(table.parse_sort("-metric:loss:best", columns).descending, True)
        fallback = table.parse_sort("config:nope", columns)
        self.assertEqual((fallback.column.key, fallback.descending), ("field:created_at", True))


class SpreadTests(SimpleTestCase):
    @given(st.lists(st.floats(min_value=-1e6, max_value=1e6), min_size=2, max_size=30))
    def test_mean_and_spread_are_the_sample_mean_and_standard_deviation(
        self, values: list[float]
    ) -> None:
        found = table.mean_and_spread(values)
        self.assertEqual(found.runs, len(values))
        assert found.mean is not None and found.spread is not None
        self.assertTrue(math.isclose(found.mean, statistics.fmean(values), abs_tol=1e-6))
        self.assertTrue(
            math.isclose(found.spread, statistics.stdev(values), rel_tol=1e-6, abs_tol=1e-6)
        )

    def test_runs_without_a_finite_value_are_left_out(self) -> None:
        found = table.mean_and_spread([1.0, None, float("nan"), 3.0])
        self.assertEqual((found.runs, found.mean), (2, 2.0))
        self.assertEqual(table.spread_in_words(found), "2 ± 1.4 (2 runs)")
        self.assertEqual(table.spread_in_words(table.mean_and_spread([5.0])), "5 (1 run)")
        self.assertEqual(table.spread_in_words(table.mean_and_spread([None])), "no value")


class RunsTableReadsTests(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.user = make_user("pia", team=cls.team)
        # Its val_loss rule stops a run whose val_loss grows: lower is better.
        cls.campaign = committed_campaign(cls.team, automatic_rules=True)
        cls.item = PlannedItem.objects.get(campaign=cls.campaign, name="baseline")
        for n, (score, acc) in enumerate([(5.0, 0.5), (3.0, 0.9), (4.0, 0.7)]):
            run = make_run(cls.campaign, f"r{n}", variant=cls.item)
            Run.objects.filter(pk=run.pk).update(
                config={"lr": ["0.1", "0.01"][n % 2], "seed": n}, tags={"sweep": "a"}
            )
            add_points(run, [("val_loss", 1, score + 1), ("val_loss", 2, score), ("acc", 2, acc)])
        other = committed_campaign(Team.objects.create(name="vision"))
        add_points(make_run(other, "theirs"), [("val_loss", 1, 0.0)])
        cls.scope = reads.Scope((cls.team.pk,), cls.campaign.pk)

    def page(self, keys: list[str], sort: str = "", **filters: object) -> reads.Page:
        columns = table.parse_columns(keys)
        return reads.page_of_runs(
            self.scope, columns, table.parse_sort(sort, columns), reads.Filters(**filters)
        )

    def test_best_follows_each_metrics_direction(self) -> None:
        keys = ["metric:val_loss:best", "metric:acc:best"]
        by_score = self.page(keys, "metric:val_loss:best")
        self.assertEqual([r.run_id for r in by_score.runs], ["r1", "r2", "r0"])
        self.assertEqual([r.c1 for r in by_score.runs], [3.0, 4.0, 5.0])  # type: ignore[attr-defined]
        by_acc = self.page(keys, "-metric:acc:best")
        self.assertEqual([r.run_id for r in by_acc.runs], ["r1", "r2", "r0"])
        self.assertEqual(by_acc.lower_is_better, {"acc": False, "val_loss": True})

    def test_latest_is_the_value_at_the_largest_step_and_nan_keeps_its_token(self) -> None:
        add_points(Run.objects.get(run_id="r0"), [("val_loss", 9, float("nan"))])
        rows = {r.run_id: r for r in self.page(["metric:val_loss:latest"]).runs}
        self.assertEqual(rows["r0"].t1, "NaN")  # type: ignore[attr-defined]
        self.assertEqual(rows["r1"].c1, 3.0)  # type: ignore[attr-defined]

    def test_filters_by_config_value_and_tag_and_no_other_teams_run_shows(self) -> None:
        self.assertEqual(
            sorted(r.run_id for r in self.page(["config:lr"], config="lr=0.1").runs), ["r0", "r2"]
        )
        self.assertEqual(self.page([], tag="sweep=a").total, 3)
        self.assertEqual(self.page([], tag="sweep=b").total, 0)
        everything = reads.page_of_runs(
            reads.Scope((self.team.pk,)), table.parse_columns([]),
            table.parse_sort("", table.parse_columns([])), reads.Filters(),
        )  # fmt: skip
        self.assertNotIn("theirs", [r.run_id for r in everything.runs])

    def test_groups_give_the_mean_and_spread_of_a_metric_per_config_value(self) -> None:
        metric = table.parse_column("metric:val_loss:best")
        found = reads.groups(self.scope, reads.Filters(), "config:lr", metric, {"val_loss": True})
        by_label = {g.label: g for g in found}
        self.assertEqual(by_label["0.1"].runs, 2)
        self.assertEqual(by_label["0.1"].found.mean, 4.5)
        self.assertAlmostEqual(by_label["0.1"].found.spread or 0, statistics.stdev([5.0, 4.0]))
        self.assertEqual(by_label["0.01"].found.spread, None)

    def test_a_page_costs_the_same_statements_at_3_and_30_runs_and_1_and_6_metrics(self) -> None:
        def statements(keys: list[str]) -> int:
            with CaptureQueriesContext(connection) as captured:
                self.page(keys, keys[-1])
                reads.choices(self.scope)
            return len(captured.captured_queries)

        few = statements(["metric:val_loss:best"])
        for n in range(27):
            add_points(make_run(self.campaign, f"more-{n}"), [("val_loss", 1, n), ("x", 1, n)])
        many = statements(
            ["metric:val_loss:best", "metric:val_loss:latest", "metric:acc:best", "metric:x:best",
             "metric:y:latest", "metric:z:best", "config:lr"],
        )  # fmt: skip
        self.assertEqual(few, many)

    def test_a_column_choice_is_remembered_and_a_bad_key_refused_naming_it(self) -> None:
        remember_columns(acting_user=self.user, columns=["metric:acc:best", "config:seed"])
        self.assertEqual(
            [c.key for c in reads.layout_of(self.user)],
            ["field:name", "metric:acc:best", "config:seed"],
        )
        with self.assertRaises(ValidationError) as refused:
            remember_columns(acting_user=self.user, columns=["field:secret"])
        self.assertIn("columns", refused.exception.message_dict)


class MlflowRunsByTheirNameTests(TestCase):
    def test_the_compare_page_and_the_table_name_an_mlflow_run_by_its_run_name(self) -> None:
        team = Team.objects.create(name="nlp")
        user = make_user("pia", team=team)
        campaign = committed_campaign(team)
        run = make_run(campaign, "0f" * 16)
        Run.objects.filter(pk=run.pk).update(run_name="lora-r16-seed1")
        add_points(run, [("loss", 1, 2.0)])
        self.client.force_login(user)
        compare = self.client.get(f"/admin/campaigns/campaign/{campaign.pk}/compare/")
        table_page = self.client.get(f"/admin/campaigns/run/?campaign={campaign.pk}")
        for page in (compare, table_page):
            self.assertContains(page, ">lora-r16-seed1<")
            self.assertNotContains(page, f">{'0f' * 16}<")
        self.assertIn('"lora-r16-seed1"', compare.content.decode())  # the chart's series name

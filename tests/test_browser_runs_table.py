"""The runs table at 1366×768 (issue 33 item 1): a 300-run campaign with three metric and two
configuration columns chosen, sorted by a metric, filtered, grouped with mean ± spread over the
seeds, the choice remembered, and no sideways scroll of the page."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from campaigns.models import PlannedItem, Run, RunTableLayout, Team
from campaigns.tests.factories import add_points, committed_campaign, make_user
from tests.browser import MISSING, BrowserTestCase

BUILD = Path(__file__).resolve().parent.parent / "build"
RATES = ("0.001", "0.0003", "0.0001")


def three_hundred_runs(campaign) -> list[Run]:  # type: ignore[no-untyped-def]
    """2 items × 3 learning rates × 50 seeds; loss falls with the rate, acc rises with it."""
    items = list(PlannedItem.objects.filter(campaign=campaign).order_by("id"))
    runs = []
    for n in range(300):
        item, rate, seed = items[n % 2], RATES[(n // 2) % 3], n // 6
        config = {"lr": rate, "seed": seed, "batch": 8}
        runs.append(
            Run(
                team=campaign.team,
                campaign=campaign,
                run_id=f"run-{n:03d}",
                run_name=f"{item.name} lr={rate} seed={seed}",
                variant=item,
                kind="full",
                status="completed" if n % 10 else "failed",
                config=config,
                config_digest=Run.digest_config(config),
                tags={"sweep": "lr"},
            )
        )
    Run.objects.bulk_create(runs)
    for n, run in enumerate(Run.objects.filter(campaign=campaign).order_by("run_id")):
        base = 1.0 + RATES.index(run.config["lr"]) + (n % 7) / 100
        add_points(
            run,
            [
                ("loss", 1, base + 1),
                ("loss", 2, base),
                ("acc", 2, 0.9 - base / 10),
                ("val_loss", 2, base + 0.5),
            ],
        )
    return list(Run.objects.filter(campaign=campaign))


@pytest.mark.browser
@pytest.mark.skipif(MISSING is not None, reason=MISSING or "")
class RunsTableOfThreeHundredRuns(BrowserTestCase):
    implicit_wait = 5

    def setUp(self) -> None:
        self.team = Team.objects.create(name="nlp")
        make_user("pia", team=self.team, role="planner", password="pw-pia")
        self.campaign = committed_campaign(self.team)
        self.runs = three_hundred_runs(self.campaign)

    def choose(self, *keys: str) -> None:
        from selenium.webdriver.common.by import By

        b = self.browser
        b.find_element(By.CSS_SELECTOR, "#runs-columns summary").click()
        for box in b.find_elements(By.CSS_SELECTOR, "#runs-columns input[name=columns]"):
            if (box.get_attribute("value") in keys) != box.is_selected():
                b.execute_script("arguments[0].click();", box)
        self.follow(b.find_element(By.ID, "save-columns"))

    def pick(self, element_id: str, value: str) -> None:
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import Select

        Select(self.browser.find_element(By.ID, element_id)).select_by_value(value)

    def cells(self, key: str) -> list[str]:
        from selenium.webdriver.common.by import By

        heads = self.browser.find_elements(By.CSS_SELECTOR, "#runs-table thead th")
        index = [h.get_attribute("data-key") for h in heads].index(key)
        rows = self.browser.find_elements(By.CSS_SELECTOR, "#runs-table tbody tr")
        return [r.find_elements(By.TAG_NAME, "td")[index].text for r in rows]

    def check_groups_by_item(self, expected: list[Run]) -> None:
        """Grouped by item over the seeds: mean ± spread of the best accuracy."""
        from selenium.webdriver.common.by import By

        self.pick("group-by", "item")
        self.pick("group-metric", "metric:acc:best")
        self.follow(self.browser.find_element(By.ID, "apply-group"))
        rows = self.browser.find_elements(By.CSS_SELECTOR, "#runs-groups tbody tr")
        self.assertEqual(len(rows), 2)
        for row in rows:
            item, count, figure = (td.text for td in row.find_elements(By.TAG_NAME, "td"))
            accs = [
                0.9 - (2.0 + (int(r.run_id[4:]) % 7) / 100) / 10
                for r in expected
                if r.variant and r.variant.name == item
            ]
            self.assertEqual(int(count), len(accs))
            self.assertEqual(
                figure,
                f"{statistics.mean(accs):.5g} ± {statistics.stdev(accs):.2g} ({len(accs)} runs)",
            )

    def test_choose_sort_filter_and_group_three_hundred_runs(self) -> None:
        from selenium.webdriver.common.by import By

        b = self.browser
        self.log_in("pia")
        b.get(f"{self.live_server_url}/admin/campaigns/run/?campaign={self.campaign.pk}")
        self.assertIn("300 runs", b.find_element(By.ID, "runs-count").text)
        chosen = ("metric:loss:best", "metric:acc:best", "metric:val_loss:latest")
        self.choose("field:item", "field:status", *chosen, "config:lr", "config:seed")
        layout = RunTableLayout.objects.get(user__username="pia")
        self.assertEqual(
            layout.columns,
            ["field:item", "field:status", *sorted(chosen, key=_chooser_order), "config:lr",
             "config:seed"],
        )  # fmt: skip

        # Sorted by the best loss, lowest first: the run with the smallest of 300.
        self.follow(b.find_element(By.CSS_SELECTOR, "th[data-key='metric:loss:best'] a"))
        self.follow(b.find_element(By.CSS_SELECTOR, "th[data-key='metric:loss:best'] a"))
        self.assertIn("▲", b.find_element(By.CSS_SELECTOR, "th[data-key='metric:loss:best']").text)
        losses = [float(v) for v in self.cells("metric:loss:best")]
        self.assertEqual(losses, sorted(losses))
        self.assertEqual(losses[0], 1.0)  # lr 0.001 and n % 7 == 0: the lowest base

        # Filtered: lr 0.0003, completed runs only.
        self.fill("config", "lr=0.0003")
        self.select("status", "completed")
        self.follow(b.find_element(By.ID, "apply-filters"))
        expected = [r for r in self.runs if r.config["lr"] == "0.0003" and r.status == "completed"]
        self.assertIn(f"{len(expected)} runs", b.find_element(By.ID, "runs-count").text)
        self.assertEqual(set(self.cells("config:lr")), {"0.0003"})
        losses = [float(v) for v in self.cells("metric:loss:best")]
        self.assertEqual(losses, sorted(losses))

        self.check_groups_by_item(expected)
        self.no_horizontal_scroll("the runs table")
        BUILD.mkdir(exist_ok=True)
        b.save_screenshot(str(BUILD / "i33-runs-table-grouped.png"))

        # The seeds themselves as groups: one row per seed value.
        self.pick("group-by", "config:seed")
        self.follow(b.find_element(By.ID, "apply-group"))
        seeds = {r.config["seed"] for r in expected}
        self.assertEqual(len(b.find_elements(By.CSS_SELECTOR, "#runs-groups tbody tr")), len(seeds))

        # The choice is remembered: a new visit shows the same columns.
        b.get(f"{self.live_server_url}/admin/campaigns/run/")
        keys = [
            h.get_attribute("data-key")
            for h in b.find_elements(By.CSS_SELECTOR, "#runs-table thead th")
        ]
        self.assertEqual(keys, ["field:name", *layout.columns])
        self.no_horizontal_scroll("the runs table of every campaign")
        b.save_screenshot(str(BUILD / "i33-runs-table.png"))
        self.check_a_wide_table_scrolls_inside_its_frame()

    def check_a_wide_table_scrolls_inside_its_frame(self) -> None:
        """Sixteen columns: the table scrolls sideways in its frame, the run's name frozen at
        its left, and the page itself does not scroll."""
        from selenium.webdriver.common.by import By

        b = self.browser
        many = [f"field:{n}" for n in ("campaign", "item", "kind", "status", "gpus",
                                        "observed_hours", "last_step", "created_at", "finished_at",
                                        "tags")]  # fmt: skip
        self.choose(*many, "metric:loss:best", "metric:loss:latest", "metric:acc:best",
                    "metric:acc:latest", "config:lr", "config:seed")  # fmt: skip
        frame = b.find_element(By.CSS_SELECTOR, ".runs-wrap")
        inner, outer = b.execute_script(
            "return [arguments[0].scrollWidth, arguments[0].clientWidth]", frame
        )
        self.assertGreater(inner, outer)  # wider than its frame: it scrolls inside it
        self.no_horizontal_scroll("the runs table with sixteen columns")
        b.execute_script("arguments[0].scrollLeft = 400", frame)
        first = b.find_element(By.CSS_SELECTOR, "#runs-table tbody td:first-child")
        self.assertEqual(first.value_of_css_property("position"), "sticky")
        frame_left = b.execute_script("return arguments[0].getBoundingClientRect().left", frame)
        name_left = b.execute_script("return arguments[0].getBoundingClientRect().left", first)
        self.assertLessEqual(abs(name_left - frame_left), 2)  # still at the frame's left edge
        b.save_screenshot(str(BUILD / "i33-runs-table-wide.png"))


def _chooser_order(key: str) -> tuple[str, int]:
    name, which = key.split(":")[1:]
    return name, 0 if which == "latest" else 1

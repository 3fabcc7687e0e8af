"""A planner edits a stage of a 200-item draft in a 1366×768 headless Chromium (issue 21).

The stage rows' selects arrive holding only their own choices and are filled from the lists
written once in the page (campaigns/admin/shared_choices.py); the tables come 25 rows a page.
The planner turns to the third page, gives a stage another item and two other dependencies
(neither of them on that page), saves, and the change is stored; the page does not scroll
sideways. Screenshots go to build/h21page/.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from campaigns.models import Campaign, Stage, Team
from campaigns.tests.factories import grow_plan, make_plannable, make_user
from tests.browser import MISSING, BrowserTestCase

BUILD = Path(__file__).resolve().parent.parent / "build" / "h21page"


@pytest.mark.browser
@pytest.mark.skipif(MISSING is not None, reason=MISSING or "")
class LargePlanAt1366(BrowserTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.browser.set_page_load_timeout(60)  # a save that hangs fails instead of waiting

    def setUp(self) -> None:
        self.team = Team.objects.create(name="nlp")
        make_user("pia", team=self.team, role="planner", password="pw-pia")
        self.campaign: Campaign = make_plannable(self.team)
        grow_plan(self.campaign, 200)
        BUILD.mkdir(parents=True, exist_ok=True)

    def stage_prefix(self, name: str) -> str:
        """The form prefix (``stages-N``) of the stage row whose name is ``name``."""
        from selenium.webdriver.common.by import By

        field = self.browser.find_element(By.CSS_SELECTOR, f'input[value="{name}"]')
        return str(field.get_attribute("name")).removesuffix("-name")

    def options(self, select_name: str) -> Any:
        return self.browser.execute_script(
            "return document.getElementsByName(arguments[0])[0].options.length;", select_name
        )

    def show_row(self, prefix: str) -> None:
        self.browser.execute_script(
            "document.getElementById(arguments[0]).scrollIntoView({block: 'center'});", prefix
        )

    def test_a_stage_of_a_200_item_draft_gets_another_item_and_dependencies_and_saves(
        self,
    ) -> None:
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import Select, WebDriverWait

        b = self.browser
        self.log_in("pia")
        url = f"{self.live_server_url}/admin/campaigns/campaign/{self.campaign.pk}/change/"
        b.get(f"{url}?page=3")
        pager = b.find_element(By.ID, "row-pages")
        self.assertIn("rows 51–75 of 200", pager.text)
        b.execute_script("arguments[0].scrollIntoView({block: 'start'});", pager)
        b.save_screenshot(str(BUILD / "large-plan-pager.png"))
        row = self.stage_prefix("train-v60")
        # Filled from the page's one list: every item (and the blank choice), every stage.
        self.assertEqual(self.options(f"{row}-variant"), 201)
        self.assertEqual(self.options(f"{row}-depends_on"), 199)
        self.no_horizontal_scroll("the third page of a 200-item plan", against="window")
        self.show_row(row)
        b.save_screenshot(str(BUILD / "large-plan-page-3.png"))

        Select(b.find_element(By.NAME, f"{row}-variant")).select_by_visible_text("v7 (mandatory)")
        after = Select(b.find_element(By.NAME, f"{row}-depends_on"))
        after.deselect_all()
        after.select_by_visible_text("train-v3 (2.00 h)")
        after.select_by_visible_text("train-v30 (2.00 h)")
        # A row added on the page has the full lists too (a clone of the filled empty row).
        add = b.find_element(By.CSS_SELECTOR, "#stages-group .add-row a")
        b.execute_script("arguments[0].click();", add)
        added = b.find_elements(By.CSS_SELECTOR, "#stages-group tr.dynamic-stages")[-1]
        self.assertEqual(self.options(f"{added.get_attribute('id')}-variant"), 201)
        button = b.find_element(By.NAME, "_continue")
        b.execute_script("arguments[0].click();", button)
        WebDriverWait(b, 60).until(
            lambda d: (
                d.find_elements(By.CSS_SELECTOR, "ul.messagelist li.success")
                or d.find_elements(By.CSS_SELECTOR, ".errornote")
            )
        )
        self.assertFalse(b.find_elements(By.CSS_SELECTOR, ".errornote"), "the save was refused")
        self.assertIn("page=3", b.current_url, "the save comes back to the page it saved")
        self.no_horizontal_scroll("the saved page", against="window")
        self.show_row(self.stage_prefix("train-v60"))
        b.save_screenshot(str(BUILD / "large-plan-saved.png"))

        stage = Stage.objects.get(campaign=self.campaign, name="train-v60")
        self.assertEqual(stage.variant.name if stage.variant else None, "v7")
        self.assertEqual(sorted(s.name for s in stage.depends_on.all()), ["train-v3", "train-v30"])
        # The other rows of the page were posted unchanged and kept.
        untouched = Stage.objects.get(campaign=self.campaign, name="train-v61")
        self.assertEqual([s.name for s in untouched.depends_on.all()], ["train-v60"])
        self.assertEqual(untouched.variant.name if untouched.variant else None, "v61")

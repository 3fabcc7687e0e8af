"""The campaign admin page costs the same at 20 and at 200 items, draft or committed: the same
SQL queries, the same number of rows and of ``<option>`` elements (the choice lists are written
once in the page, the tables paged), and under 1 MB of HTML (issue 21; times in
bench/campaign_page)."""

from __future__ import annotations

from collections import Counter
from decimal import Decimal
from typing import Any
from unittest import mock

from django.contrib.admin.options import InlineModelAdmin
from django.db import connection
from django.test import TestCase
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from campaigns.admin.campaign import CampaignAdmin
from campaigns.admin.inlines import ROWS_PER_PAGE
from campaigns.models import Campaign, PlannedItem, Team
from campaigns.services.plans import commit_plan
from campaigns.tests.factories import grow_plan, make_plannable, make_user
from tests.adminforms import form_data


class ADraftAndACommittedPlan(TestCase):
    """A planner's team with a draft and a committed campaign (``grown``: items added to the
    committed one before its commit), the planner logged in."""

    grown = 0
    team: Team
    planner: Any
    draft: Campaign
    committed: Campaign

    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.planner = make_user("pia", team=cls.team, role="planner")
        cls.draft = make_plannable(cls.team, title="draft")
        cls.committed = make_plannable(cls.team, title="committed")
        if cls.grown:
            grow_plan(cls.committed, cls.grown)
        commit_plan(campaign=cls.committed, acting_user=cls.planner)

    def setUp(self) -> None:
        self.client.force_login(self.planner)


class CampaignPageCost(ADraftAndACommittedPlan):
    grown = 20

    def cost(self, campaign: Campaign) -> dict[str, Any]:
        url = reverse("admin:campaigns_campaign_change", args=[campaign.pk])
        self.client.get(url)  # warm the session and content-type caches
        with CaptureQueriesContext(connection) as captured:
            page = self.client.get(url)
        self.assertEqual(page.status_code, 200)
        return {
            "queries": len(captured),
            "options": page.content.count(b"<option"),
            "rows": page.content.count(b'class="form-row'),
            "bytes": len(page.content),
        }

    def grown_to_200(self, campaign: Campaign) -> Campaign:
        # A committed plan only grows by amendment; its rows are added here as a draft's are.
        grow_plan(campaign, 200)
        return campaign

    def test_a_draft_costs_the_same_queries_rows_and_options_at_20_and_200_items(self) -> None:
        grow_plan(self.draft, 20)
        at_20 = self.cost(self.draft)
        grow_plan(self.draft, 60)  # more than one page of rows
        at_60 = self.cost(self.draft)
        at_200 = self.cost(self.grown_to_200(self.draft))
        self.assertEqual(at_200["queries"], at_20["queries"])
        # The items', their work's and the stages' tables show a page each, not 600 rows.
        self.assertLess(at_200["rows"], 3 * ROWS_PER_PAGE + 30)
        self.assertEqual(at_200["rows"], at_60["rows"])
        # Each stage row holds its own choices only; the full lists are written once.
        self.assertEqual(at_200["options"], at_60["options"])
        self.assertLess(at_200["bytes"], 1_000_000)

    def test_a_committed_plan_costs_the_same_queries_at_20_and_200_items(self) -> None:
        at_20 = self.cost(self.committed)
        at_200 = self.cost(self.grown_to_200(self.committed))
        self.assertEqual(at_200["queries"], at_20["queries"])
        self.assertLess(at_200["bytes"], 1_000_000)

    def test_the_second_page_shows_the_next_rows_and_the_pager(self) -> None:
        grow_plan(self.draft, 120)
        url = reverse("admin:campaigns_campaign_change", args=[self.draft.pk])
        page = self.client.get(url, {"page": 2}).content.decode()
        self.assertTrue('id="row-pages"' in page, "no pager")
        self.assertTrue("rows 26–50 of 120" in page, "not the second page's rows")
        self.assertTrue('value="train-v30"' in page, "row 30 of the stages is not shown")
        self.assertFalse('value="train-v20"' in page, "row 20 of the stages is shown")
        self.assertTrue('<script id="shared-choices" type="application/json">' in page)


class EachInlineIsBuiltOncePerRequest(ADraftAndACommittedPlan):
    """The change view asks for the inlines' formsets again when a service refuses a row (the
    page is built a second time from the same post, campaigns/admin/refusals.py); building one
    makes its form class, every field and every choice list anew."""

    def builds(self, request: Any) -> tuple[Counter[str], Counter[tuple[str, str]], Any]:
        """How many times each inline's formset class was built while answering, how many
        times each of its fields was made, and the answer."""
        formsets: Counter[str] = Counter()
        fields: Counter[tuple[str, str]] = Counter()
        get_formset = InlineModelAdmin.get_formset
        formfield_for_dbfield = InlineModelAdmin.formfield_for_dbfield

        def counted_formset(inline: Any, *args: Any, **kwargs: Any) -> Any:
            formsets[type(inline).__name__] += 1
            return get_formset(inline, *args, **kwargs)

        def counted_field(inline: Any, db_field: Any, *args: Any, **kwargs: Any) -> Any:
            fields[(type(inline).__name__, db_field.name)] += 1
            return formfield_for_dbfield(inline, db_field, *args, **kwargs)

        with (
            mock.patch.object(InlineModelAdmin, "get_formset", counted_formset),
            mock.patch.object(InlineModelAdmin, "formfield_for_dbfield", counted_field),
        ):
            answer = request()
        return formsets, fields, answer

    def assert_each_built_once(self, campaign: Campaign, posted: dict[str, str] | None) -> None:
        url = reverse("admin:campaigns_campaign_change", args=[campaign.pk])
        data = form_data(self.client.get(url).content.decode(), "campaign_form")
        formsets, fields, answer = self.builds(
            lambda: self.client.post(url, {**data, **posted}) if posted else self.client.get(url)
        )
        self.assertEqual(answer.status_code, 200)
        if posted:
            self.assertContains(answer, "Nothing was saved")  # the second pass ran
        self.assertEqual(len(formsets), len(CampaignAdmin.inlines), formsets)
        self.assertEqual(set(formsets.values()), {1}, formsets)
        self.assertTrue(fields)
        self.assertEqual(set(fields.values()), {1}, fields)

    def test_a_draft_page_builds_each_inline_and_its_fields_once(self) -> None:
        self.assert_each_built_once(self.draft, None)

    def test_a_draft_post_a_service_refuses_builds_each_inline_once(self) -> None:
        self.assert_each_built_once(self.draft, {"items-0-planned_hours": "-3"})

    def test_a_committed_page_builds_each_inline_and_its_fields_once(self) -> None:
        self.assert_each_built_once(self.committed, None)

    def test_a_committed_post_a_service_refuses_builds_each_inline_once(self) -> None:
        self.assert_each_built_once(
            self.committed, {"items-0-planned_hours": "-3", "items-0-amendment_reason": "pilot"}
        )


class APostCostsTheSameQueriesWhateverItsRows(TestCase):
    """Each posted row's hidden id is found among the rows its table read (campaigns/admin/
    inlines.py, PageRowsFormSet), a stage's item and dependencies among the choice lists
    (campaigns/admin/tenancy.py, choices_once), not looked up again: one query per row and
    table before, and two per stage."""

    def setUp(self) -> None:
        team = Team.objects.create(name="nlp")
        self.client.force_login(make_user("pia", team=team, role="planner"))
        self.draft = make_plannable(team, title="draft")

    def refused_post(self) -> int:
        url = reverse("admin:campaigns_campaign_change", args=[self.draft.pk])
        data = form_data(self.client.get(url).content.decode(), "campaign_form")
        with CaptureQueriesContext(connection) as captured:
            answer = self.client.post(url, {**data, "title": ""})
        self.assertContains(answer, "errorlist")
        return len(captured)

    def test_a_refused_post_of_2_or_20_items_costs_the_same_queries(self) -> None:
        at_2 = self.refused_post()
        PlannedItem.objects.bulk_create(
            PlannedItem(campaign=self.draft, name=f"v{i}", planned_hours=Decimal("2"))
            for i in range(18)
        )
        self.assertEqual(self.refused_post(), at_2)

    def test_a_staged_item_costs_a_post_one_query_the_models_check_of_the_stages_item(
        self,
    ) -> None:
        # Six before: the item's id in its two tables, the stage's id, item and dependencies,
        # and Stage's own validation of its item (ForeignKey.validate), which stays.
        grow_plan(self.draft, 5)
        at_5 = self.refused_post()
        grow_plan(self.draft, 20)
        self.assertEqual(self.refused_post() - at_5, 15)

"""Text people typed stays text in the closing report (issue 19, Low; docs/domain.md §16): the
Markdown rendering passed raw HTML and `javascript:` links through, so a viewer that renders
Markdown ran or linked what a planner wrote in a title, a note or an expense. Checked on the
stored Markdown, on it rendered by a Markdown renderer that allows raw HTML and any link target
(as many do), and on the HTML rendering."""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

from django.test import TestCase
from django.urls import reverse
from markdown_it import MarkdownIt

from campaigns.models import Campaign, Team
from campaigns.tests.factories import committed_campaign, make_plannable, make_user
from ledger.rendering.closing_report import render_html, render_markdown
from ledger.selectors.closing_report import collect
from ledger.services import post_entry
from ledger.templatetags.ledger_report import md_cell, md_text
from tests.adminforms import form_data

SCRIPT = "<script>alert('title')</script>"
IMAGE = '<img src=x onerror="alert(1)">'
LINK = "[open the results](javascript:alert(document.cookie))"
AUTOLINK = "<javascript:alert(2)>"
REFERENCE = "[x]\n\n[x]: javascript:alert(3)"


def permissive_html(markdown: str) -> str:
    """Markdown as a renderer with raw HTML on and no check on link targets shows it."""
    renderer = MarkdownIt("commonmark", {"html": True}).enable("table")
    renderer.validateLink = lambda url: True  # type: ignore[method-assign]
    return renderer.render(markdown)


class TheReportKeepsTypedTextAsText(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        team = Team.objects.create(name="nlp")
        owner = make_user("olga", team=team, role="owner")
        campaign = committed_campaign(team, owner)
        Campaign.objects.filter(pk=campaign.pk).update(
            title=f"Typed {SCRIPT}", question=f"Which? {IMAGE}", conclusion=f"See {LINK} {AUTOLINK}"
        )
        campaign.refresh_from_db()
        post_entry(
            campaign=campaign,
            kind="included",
            description=f"storage {LINK} | {IMAGE}",
            amount=Decimal("5.00"),
            currency="USD",
        )
        cls.data = collect(campaign)

    def test_the_markdown_holds_no_tag_and_no_link(self) -> None:
        markdown = render_markdown(self.data)
        for raw in (SCRIPT, IMAGE, LINK, AUTOLINK, "<script", "<img"):
            self.assertNotIn(raw, markdown)
        self.assertNotRegex(markdown, r"(?<!\\)\]\(javascript:")  # only as "\](javascript:"
        self.assertIn("&lt;script&gt;alert('title')&lt;/script&gt;", markdown)
        self.assertIn("\\[open the results\\](javascript:alert(document.cookie))", markdown)

    def test_rendered_it_shows_the_characters_and_runs_and_links_nothing(self) -> None:
        html = permissive_html(render_markdown(self.data))
        self.assertNotIn("<script", html)
        self.assertNotIn("<img", html)
        self.assertNotIn('href="javascript:', html)
        self.assertIn("Typed &lt;script&gt;alert('title')&lt;/script&gt;", html)
        self.assertIn("[open the results](javascript:alert(document.cookie))", html)

    def test_the_html_rendering_escapes_them_too(self) -> None:
        html = render_html(self.data)
        self.assertNotIn(SCRIPT, html)
        self.assertNotIn("<img src=x", html)
        self.assertNotIn('href="javascript:', html)
        self.assertIn("&lt;script&gt;", html)

    def test_the_filters_make_any_link_or_tag_inert(self) -> None:
        for text in (SCRIPT, IMAGE, LINK, AUTOLINK, REFERENCE, "\\[x](javascript:alert(4))"):
            with self.subTest(text=text):
                for shown in (md_text(text), md_cell(text)):
                    html = permissive_html(shown)
                    self.assertNotIn("<a ", html)
                    self.assertNotIn("<script", html)
                    self.assertNotIn("<img", html)


def _strings(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """The path of every string in the report's data."""
    if isinstance(value, str):
        yield path
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, (*path, key))
    elif isinstance(value, list):
        for n, item in enumerate(value):
            yield from _strings(item, (*path, n))


class EveryStringOfTheDataShowsInert(TestCase):
    """Issue 32: a planner typed a `javascript:` link as a checkpoint component in the admin
    (a JSON field shown without `md_text`), and the Markdown report kept it a link."""

    @classmethod
    def setUpTestData(cls) -> None:
        team = Team.objects.create(name="nlp")
        owner = make_user("olga", team=team, role="owner")
        cls.campaign = committed_campaign(team, owner, automatic_rules=True)

    def test_a_component_typed_as_a_link_in_the_admin_stays_text(self) -> None:
        Campaign.objects.filter(pk=self.campaign.pk).update(
            required_checkpoint_components=["model", LINK]
        )
        self.campaign.refresh_from_db()
        html = permissive_html(render_markdown(collect(self.campaign)))
        self.assertNotIn('href="javascript:', html)
        self.assertIn("[open the results](javascript:alert(document.cookie))", html)

    def test_a_link_in_any_string_of_the_data_is_no_link(self) -> None:
        data = collect(self.campaign)
        paths = list(_strings(data))
        self.assertGreater(len(paths), 50)
        for path in paths:
            changed = copy.deepcopy(data)
            holder = functools.reduce(lambda node, key: node[key], path[:-1], changed)
            holder[path[-1]] = LINK
            with self.subTest(path=path):
                html = permissive_html(render_markdown(changed))
                self.assertNotIn('href="javascript:', html)


class TheAdminTakesOnlyKnownComponents(TestCase):
    def test_a_link_typed_as_a_component_is_refused_naming_the_field(self) -> None:
        team = Team.objects.create(name="nlp")
        planner = make_user("pia", team=team)
        campaign = make_plannable(team)
        self.client.force_login(planner)
        url = reverse("admin:campaigns_campaign_change", args=[campaign.pk])
        data = form_data(self.client.get(url).content.decode(), "campaign_form")
        data["required_checkpoint_components"] = json.dumps(["model", LINK])
        answer = self.client.post(url, data)
        self.assertEqual(answer.status_code, 200)  # the form again, with the error
        self.assertContains(answer, "a list of checkpoint components, each one of model")
        campaign.refresh_from_db()
        self.assertNotIn(LINK, campaign.required_checkpoint_components)

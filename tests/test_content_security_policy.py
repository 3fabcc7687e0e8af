"""A Content-Security-Policy on every page (issue 19, Low; README, Production notes): scripts
only from our own static files, so text that slipped through escaping could not run. Our pages
therefore carry no inline script and no on… attribute (they moved to
campaigns/static/campaigns/pages.js, and the API docs to Swagger UI's split view); this checks
the header and the pages' HTML as served. tests/test_browser_csp.py loads them in Chromium."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from django.test import TestCase

from campaigns.models import Run, Team
from campaigns.tests.factories import committed_campaign, make_plannable, make_user
from campaigns.tests.test_compare_runs import add_run

CURVES = {"val_loss": (50, lambda s: 3 / (1 + s)), "lr": (50, lambda s: 3e-4)}


class InlineScripts(HTMLParser):
    """The <script> elements without src that a browser would run, and on… attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        data_block = (named.get("type") or "").lower() in {"application/json", "text/template"}
        if tag == "script" and not named.get("src") and not data_block:
            self.found.append(f"inline <script {named}>")
        self.found += [f"<{tag} {k}=…>" for k, _ in attrs if re.fullmatch(r"on[a-z]+", k)]


def runnable_inline(html: str) -> list[str]:
    parser = InlineScripts()
    parser.feed(html)
    return parser.found


class EveryPageHasAPolicyAndNoInlineScript(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.owner = make_user("olga", team=cls.team, role="owner", is_superuser=True)
        cls.campaign = committed_campaign(cls.team, cls.owner, lots=1)
        add_run(cls.campaign, "base-full", 0, "full", CURVES, {"seed": 1})
        add_run(cls.campaign, "lora-r16", 1, "full", CURVES, {"seed": 2})
        cls.logged = Run.objects.get(run_id="base-full")

    def pages(self) -> dict[str, str]:
        c, admin = self.campaign.pk, "/admin/campaigns"
        return {
            "campaign page": f"{admin}/campaign/{c}/change/",
            "compare page": f"{admin}/campaign/{c}/compare/?metric=val_loss",
            "run page": f"{admin}/run/{self.logged.pk}/change/",
            "portfolio": f"{admin}/team/{self.team.pk}/portfolio/",
            "admin index": "/admin/",
            "API docs": "/api/v1/docs/",
            "browsable API": f"/api/v1/campaigns/{c}/",
            "MLflow landing": "/mlflow/",
        }

    def test_the_policy_runs_scripts_from_our_own_files_only(self) -> None:
        self.client.force_login(self.owner)
        for page, url in {**self.pages(), "login": "/admin/login/"}.items():
            with self.subTest(page=page):
                if page == "login":
                    self.client.logout()
                answer = self.client.get(url, HTTP_ACCEPT="text/html")
                self.assertEqual(answer.status_code, 200, page)
                policy = dict(
                    part.strip().split(" ", 1)
                    for part in answer["Content-Security-Policy"].split(";")
                )
                self.assertEqual(policy["script-src"], "'self'")
                self.assertEqual(policy["object-src"], "'none'")
                self.assertEqual(policy["frame-ancestors"], "'none'")

    def test_no_page_carries_an_inline_script_or_handler(self) -> None:
        self.client.force_login(self.owner)
        for page, url in self.pages().items():
            with self.subTest(page=page):
                html = self.client.get(url, HTTP_ACCEPT="text/html").content.decode()
                self.assertEqual(runnable_inline(html), [], page)

    def test_a_campaign_page_with_errors_still_opens_on_its_summary_without_inline_script(
        self,
    ) -> None:
        from tests.adminforms import form_data

        self.client.force_login(self.owner)
        draft = make_plannable(self.team, title="a draft")
        url = f"/admin/campaigns/campaign/{draft.pk}/change/"
        data = form_data(self.client.get(url).content.decode(), "campaign_form")
        data["items-0-name"] = ""
        answer = self.client.post(url, data)
        self.assertEqual(answer.status_code, 200)
        html = answer.content.decode()
        self.assertIn('id="error-summary"', html)
        self.assertEqual(runnable_inline(html), [])
        self.assertIn("campaigns/pages.js", html)

    def test_the_docs_start_up_script_is_a_file_of_its_own(self) -> None:
        self.client.force_login(self.owner)
        script = self.client.get("/api/v1/docs/?script=")
        self.assertEqual(script.status_code, 200)
        self.assertIn("SwaggerUIBundle", script.content.decode())

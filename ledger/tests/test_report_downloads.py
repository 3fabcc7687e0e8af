"""Report downloads: documented per media type, and an ingest key meets another campaign's
report as not found (docs/api.md)."""

from __future__ import annotations

from django.test import TestCase

from campaigns.models import Team
from campaigns.tests.factories import as_key, as_user, committed_campaign, ingest_key, make_user
from ledger.models import Report, ReportStatus


class ReportDownloads(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.owner = make_user("olga", team=cls.team, role="owner")
        cls.campaign = committed_campaign(cls.team)
        cls.sibling = committed_campaign(cls.team, title="sibling")
        cls.own = Report.objects.create(campaign=cls.campaign, status=ReportStatus.READY, data={})
        cls.other = Report.objects.create(
            campaign=cls.sibling,
            status=ReportStatus.READY,
            html="<p>hi</p>",
            markdown="# hi",
            data={"campaign": {"id": cls.sibling.pk}},
        )
        cls.raw_key = ingest_key(cls.campaign, cls.owner)

    def test_each_rendering_is_documented_with_its_own_media_type_and_body(self) -> None:
        schema = as_user(self.owner).get("/api/v1/schema/", HTTP_ACCEPT="application/json").json()
        expected = {
            "html": ("text/html", "string"),
            "markdown": ("text/markdown", "string"),
            "json": ("application/json", "object"),
        }
        for rendering, (media_type, kind) in expected.items():
            with self.subTest(rendering=rendering):
                path = schema["paths"][f"/api/v1/reports/{{id}}/{rendering}/"]
                content = path["get"]["responses"]["200"]["content"]
                self.assertEqual(list(content), [media_type])
                self.assertEqual(content[media_type]["schema"]["type"], kind)
                answer = as_user(self.owner).get(f"/api/v1/reports/{self.other.pk}/{rendering}/")
                self.assertEqual(answer["Content-Type"].split(";")[0], media_type)

    def test_an_ingest_key_meets_another_campaigns_report_as_not_found(self) -> None:
        loop = as_key(self.raw_key)
        for suffix in ("", "json/", "html/"):
            with self.subTest(suffix=suffix):
                self.assertEqual(
                    loop.get(f"/api/v1/reports/{self.other.pk}/{suffix}").status_code, 404
                )
                self.assertEqual(
                    loop.get(f"/api/v1/reports/{self.own.pk}/{suffix}").status_code, 403
                )
        self.assertEqual(loop.get("/api/v1/reports/999999/").status_code, 404)

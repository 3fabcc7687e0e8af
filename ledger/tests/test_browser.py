"""Looked at, not only asserted: the closing report and the admin campaign page in headless
Chromium. The charts must be drawn (bars of non-zero width, the palette's colours on screen)
and the screenshots are kept in build/ for people to look at."""

from __future__ import annotations

import struct
import unittest
import zlib
from decimal import Decimal
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.staticfiles.testing import StaticLiveServerTestCase
from django.core.management import call_command

from campaigns.models import Campaign, Stage
from campaigns.services.observed_hours import record_observed_hours
from campaigns.services.plans import commit_plan
from campaigns.tests.factories import GOOD_SHA, celery_eager, make_user
from ledger import services as ledger_services
from ledger.charts import report_charts as charts
from ledger.models import Report
from ledger.services import post_entry, submit_deliverable
from tests.browser import CHROMEDRIVER, CHROMIUM, start_chromium

BUILD = Path(settings.BASE_DIR) / "build"


def png_pixels(data: bytes) -> set[tuple[int, int, int]]:
    """The distinct RGB colours of an 8-bit, non-interlaced PNG (what Chromium writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        chunk = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    assert header is not None
    width, height, depth, colour_type, _, _, interlace = header
    assert depth == 8 and interlace == 0 and colour_type in (2, 6), header
    channels = 4 if colour_type == 6 else 3
    raw = zlib.decompress(idat)
    stride = width * channels
    previous = bytearray(stride)
    colours: set[tuple[int, int, int]] = set()
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + ((left + up) >> 1)) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                pred = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[i] = (line[i] + pred) & 0xFF
        for x in range(0, stride, channels):
            colours.add((line[x], line[x + 1], line[x + 2]))
        previous = line
    return colours


def rgb(hex_colour: str) -> tuple[int, int, int]:
    return tuple(int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))  # type: ignore[return-value]


@pytest.mark.browser
@unittest.skipUnless(
    CHROMIUM and CHROMEDRIVER, "needs headless Chromium and chromedriver on the PATH"
)
class ReportAndAdminInChromiumTests(StaticLiveServerTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        try:
            cls.browser = start_chromium(1280, 2600, extra_flags=("--hide-scrollbars",))
        except Exception:
            super().tearDownClass()
            raise
        cls.browser.set_page_load_timeout(60)
        BUILD.mkdir(exist_ok=True)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.browser.quit()
        super().tearDownClass()

    def setUp(self) -> None:
        call_command("load_demo", stdout=StringIO())
        self.campaign = Campaign.objects.get(team__name="demo")
        self.user = make_user("lena", team=self.campaign.team, password="pw-lena")
        commit_plan(campaign=self.campaign, acting_user=self.user)
        observed = {
            "Install environment": ("3", "the CUDA driver had to be reinstalled"),
            "Load corpus": ("2", ""),
            "Pilot": ("3.2", ""),
            "Train baseline": ("13", "long inputs: sequences were 30% longer than sampled"),
            "Train variant A": ("10.5", ""),
        }
        for stage in Stage.objects.filter(campaign=self.campaign, name__in=observed):
            hours, note = observed[stage.name]
            record_observed_hours(stage=stage, observed_hours=Decimal(hours), deviation_note=note)
        post_entry(
            campaign=self.campaign,
            kind="included",
            description="storage",
            amount=Decimal("8.00"),
            currency="USD",
        )
        post_entry(
            campaign=self.campaign,
            kind="external",
            description="annotators",
            amount=Decimal("12.00"),
            currency="USD",
        )
        for corpus in ("support-tickets-es", "support-tickets-pt"):
            submit_deliverable(
                campaign=self.campaign,
                kind="predictions",
                corpus_name=corpus,
                corpus_revision="r1",
                files=[{"path": "out/preds.jsonl", "size_bytes": 10, "sha256": GOOD_SHA}],
                expected_ids_ok=True,
                reload_verified=True,
            )
        # A live server runs in autocommit: the report is built on commit, inline (eager).
        with celery_eager():
            self.report = ledger_services.request_report(
                campaign=self.campaign, acting_user=self.user
            )
        self.report.refresh_from_db()
        self.assertEqual(self.report.status, "ready", self.report.error)
        self.log_in()

    def log_in(self) -> None:
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import WebDriverWait

        self.browser.get(f"{self.live_server_url}/admin/login/")
        self.browser.find_element(By.NAME, "username").send_keys("lena")
        self.browser.find_element(By.NAME, "password").send_keys("pw-lena")
        self.browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
        WebDriverWait(self.browser, 20).until(lambda b: "/login/" not in b.current_url)

    def bar_widths(self, chart_id: str) -> list[float]:
        script = (
            "return Array.from(document.querySelectorAll(arguments[0])).map("
            "r => r.getBoundingClientRect().width);"
        )
        return self.browser.execute_script(script, f"#chart-{chart_id} rect.bar")  # type: ignore[no-any-return]

    def screenshot(self, name: str) -> set[tuple[int, int, int]]:
        """The whole page (the window grown to its height), saved under build/."""
        height = self.browser.execute_script("return document.documentElement.scrollHeight")
        self.browser.set_window_size(1280, min(int(height) + 40, 12000))
        png = self.browser.get_screenshot_as_png()
        self.browser.set_window_size(1280, 2600)
        (BUILD / name).write_bytes(png)
        return png_pixels(png)

    def test_the_html_report_draws_its_charts(self) -> None:
        from selenium.webdriver.common.by import By

        self.browser.get(f"{self.live_server_url}/api/v1/reports/{self.report.pk}/html/")
        title = self.browser.find_element(By.ID, "report-title").text
        self.assertIn("Baseline vs two variants", title)
        timeline = self.bar_widths("timeline")
        costs = self.bar_widths("costs")
        self.assertGreaterEqual(len(timeline), 13 + 5)  # 13 planned stages, 5 observed
        self.assertTrue(all(w > 0 for w in timeline), timeline)
        # Sums only (rental, included, incurred, external): the ratio is the figure below.
        self.assertEqual(len(costs), 4)
        self.assertGreater(max(costs), 300)
        value = self.browser.find_element(By.ID, "cost-per-accepted-value").text
        self.assertEqual(value, "27.57 USD")  # (47.14 + 8.00) / 2 distinct corpora
        colours = self.screenshot("report.png")
        self.assertGreater(len(colours), 40)
        for colour in (
            charts.PLANNED,
            charts.OBSERVED,
            charts.OBSERVED_OVER,
            charts.RENTAL,
            charts.EXTERNAL,
        ):
            self.assertIn(rgb(colour), colours, f"{colour} is not on screen")

    def test_the_admin_campaign_page_shows_the_committed_plan_with_observed_hours(self) -> None:
        from selenium.webdriver.common.by import By

        self.browser.get(
            f"{self.live_server_url}/admin/campaigns/campaign/{self.campaign.pk}/change/"
        )
        from estimates.selectors.timeline import campaign_forecast

        summary = self.browser.find_element(By.ID, "campaign-summary")
        # Committed at 48 h; the observed hours move the calendar: the timeline's one headline.
        self.assertIn("(planned 48 h)", summary.text)
        self.assertIn(campaign_forecast(self.campaign).headline, summary.text)
        observed = [
            e.get_attribute("value")
            for e in self.browser.find_elements(By.CSS_SELECTOR, "input[name$='-observed_hours']")
        ]
        self.assertIn("13.00", observed)
        colours = self.screenshot("admin-campaign.png")
        self.assertGreater(len(colours), 20)
        self.assertEqual(Report.objects.filter(campaign=self.campaign).count(), 1)

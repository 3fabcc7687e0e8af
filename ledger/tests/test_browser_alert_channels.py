"""An owner adds an alert channel in the admin and reads the deliveries from the team's page,
in headless Chromium at 1366×768 (no horizontal scroll; screenshots build/alert-channel-add.png,
build/team-alert-channels.png, build/alert-deliveries.png): a refused URL shows beside its field
and stores nothing; the URL is never shown back (docs/domain.md §19.4–19.5)."""

from __future__ import annotations

import unittest
from decimal import Decimal
from pathlib import Path

import pytest
from django.conf import settings
from django.test import override_settings
from selenium.webdriver.common.by import By

from campaigns.services.teams import create_team
from campaigns.tests.factories import celery_eager, committed_campaign, make_user
from ledger.models import AlertChannel, AlertDelivery
from ledger.services.alerts import scan_alerts
from ledger.tests.receiver import ALLOWING, Receiver
from tests.browser import CHROMEDRIVER, CHROMIUM, BrowserTestCase

BUILD = Path(settings.BASE_DIR) / "build"


@pytest.mark.browser
@unittest.skipUnless(CHROMIUM and CHROMEDRIVER, "needs headless Chromium and chromedriver")
@override_settings(**ALLOWING)
class AlertChannelsInChromium(BrowserTestCase):
    def test_an_owner_adds_a_channel_and_reads_every_delivery(self) -> None:
        receiver = Receiver()
        self.addCleanup(receiver.close)
        team = create_team(name="nlp-desk")
        make_user("lena", team=team, role="owner", email="lena@example.org", password="pw-lena")
        self.log_in("lena")
        BUILD.mkdir(exist_ok=True)
        self.browser.get(f"{self.live_server_url}/admin/ledger/alertchannel/add/?team={team.pk}")
        self.select("kind", "slack")
        self.fill("name", "#desk-alerts")
        self.fill("target", "http://127.0.0.1:9/inward")
        self.browser.find_element(By.NAME, "_save").click()
        errors = " ".join(e.text for e in self.browser.find_elements(By.CSS_SELECTOR, ".errorlist"))
        self.assertIn("not a public address", errors)
        self.assertFalse(AlertChannel.objects.filter(kind="slack").exists())
        self.fill("target", receiver.url("/slack"))
        self.browser.save_screenshot(str(BUILD / "alert-channel-add.png"))
        self.follow(self.browser.find_element(By.NAME, "_save"))
        self.assertTrue(AlertChannel.objects.filter(team=team, kind="slack").exists())

        receiver.answer("/slack", 404)
        campaign = committed_campaign(team, title="LoRA <!channel>", budget=Decimal("40.00"))
        with celery_eager():
            scan_alerts(campaign=campaign)
        self.assertEqual(AlertDelivery.objects.filter(state="refused").count(), 1)

        self.browser.get(f"{self.live_server_url}/admin/campaigns/team/{team.pk}/change/")
        listed = self.browser.find_element(By.ID, "team-alert-channels").text
        self.assertIn("#desk-alerts", listed)
        self.assertNotIn("/slack", self.browser.page_source)  # the URL is the channel's secret
        self.no_horizontal_scroll("the team page")
        self.browser.save_screenshot(str(BUILD / "team-alert-channels.png"))
        self.browser.find_element(By.ID, "team-deliveries-link").click()
        page = self.browser.find_element(By.ID, "result_list").text
        self.assertIn("the receiver answered 404", page)
        self.no_horizontal_scroll("the deliveries list")
        self.browser.save_screenshot(str(BUILD / "alert-deliveries.png"))

"""The API docs page renders with no way out to the internet: Swagger UI is served by us."""

from __future__ import annotations

from pathlib import Path

import pytest

from campaigns.models import Team
from campaigns.tests.factories import make_user
from tests.browser import MISSING, BrowserTestCase

BUILD = Path(__file__).resolve().parent.parent / "build"
# Every non-loopback request goes to a proxy on the discard port: the outside is unreachable,
# as on a closed network, whatever DNS or routes the test machine happens to have.
OFFLINE = ("--proxy-server=127.0.0.1:9", "--proxy-bypass-list=127.0.0.1;localhost")


@pytest.mark.browser
@pytest.mark.skipif(MISSING is not None, reason=MISSING or "")
class TheDocsPageWorksOffline(BrowserTestCase):
    window = (1400, 1000)
    implicit_wait = 0
    chromium_flags = OFFLINE

    def setUp(self) -> None:
        make_user("vic", team=Team.objects.create(name="nlp"), role="viewer", password="pw-vic")

    def test_a_logged_in_user_sees_the_operations_with_the_outside_unreachable(self) -> None:
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import WebDriverWait

        b = self.browser
        self.log_in("vic")

        b.get(f"{self.live_server_url}/api/v1/docs/")
        WebDriverWait(b, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".opblock"))
        BUILD.mkdir(exist_ok=True)
        b.save_screenshot(str(BUILD / "docs-offline.png"))

        paths = {e.text for e in b.find_elements(By.CSS_SELECTOR, ".opblock-summary-path")}
        self.assertIn("/api/v1/campaigns/", paths)
        self.assertGreater(len(b.find_elements(By.CSS_SELECTOR, ".opblock")), 20)
        # Everything the page loaded came from this server.
        loaded = b.execute_script(
            "return performance.getEntriesByType('resource').map(e => e.name)"
        )
        self.assertTrue(loaded)
        outside = [url for url in loaded if not url.startswith(self.live_server_url)]
        self.assertEqual(outside, [])

"""The headless Chromium the browser tests start (tests/browser.py) leaves nothing behind: its
profile directory is its own and goes with its `quit()`."""

from __future__ import annotations

import unittest
from pathlib import Path

import pytest

from tests.browser import MISSING, start_chromium


@pytest.mark.browser
@unittest.skipIf(MISSING, MISSING or "")
class TheBrowsersProfileGoesWithIt(unittest.TestCase):
    def test_the_profile_exists_while_it_runs_and_is_removed_when_it_quits(self) -> None:
        browser = start_chromium(800, 600)
        try:
            profile = Path(browser.capabilities["chrome"]["userDataDir"])
            self.assertTrue(profile.name.startswith("cd-chromium-"), profile)
            self.assertTrue(profile.is_dir())
            browser.get("data:text/html,<p>hello</p>")
            self.assertIn("hello", browser.page_source)
        finally:
            browser.quit()
        self.assertFalse(profile.exists())

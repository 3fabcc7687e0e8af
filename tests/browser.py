"""Headless Chromium for end-to-end tests (Debian's chromium and chromium-driver)."""

from __future__ import annotations

import shutil
import tempfile
from typing import Any

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
MISSING = (
    None
    if CHROMIUM and CHROMEDRIVER
    else "needs Debian's chromium and chromium-driver (.ci/run installs them)"
)


def start_chromium(width: int = 1400, height: int = 1000, extra_flags: tuple[str, ...] = ()) -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    # The closed network refuses Chromium's background connections: switch them off.
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--window-size={width},{height}",
        f"--user-data-dir={tempfile.mkdtemp(prefix='cd-chromium-')}",
        *extra_flags,
    ):
        options.add_argument(flag)
    # The console's messages (CSP violations among them) for driver.get_log("browser").
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)

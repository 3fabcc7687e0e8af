"""Headless Chromium for end-to-end tests (Debian's chromium and chromium-driver), and what the
browser tests share: signing in, the page's width, a test case with one browser per class."""

from __future__ import annotations

import shutil
import tempfile
from typing import Any

from django.contrib.staticfiles.testing import StaticLiveServerTestCase

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
MISSING = (
    None
    if CHROMIUM and CHROMEDRIVER
    else "needs Debian's chromium and chromium-driver (.ci/run installs them)"
)


def start_chromium(width: int = 1400, height: int = 1000, extra_flags: tuple[str, ...] = ()) -> Any:
    """A headless Chromium on a profile of its own, which its ``quit()`` removes (each left
    3-5 MB in /tmp before, a dozen a run)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="cd-chromium-")
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
        f"--user-data-dir={profile}",
        *extra_flags,
    ):
        options.add_argument(flag)
    # The console's messages (CSP violations among them) for driver.get_log("browser").
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:
        driver = webdriver.Chrome(
            service=Service(executable_path=str(CHROMEDRIVER)), options=options
        )
    except Exception:
        shutil.rmtree(profile, ignore_errors=True)
        raise
    quit_browser = driver.quit

    def quit_and_remove_the_profile() -> None:
        try:
            quit_browser()
        finally:
            shutil.rmtree(profile, ignore_errors=True)

    driver.quit = quit_and_remove_the_profile
    return driver


def log_in(
    browser: Any,
    live_server_url: str,
    username: str,
    password: str | None = None,
    *,
    start: str = "/admin/login/",
    timeout: float = 10,
) -> None:
    """Sign in through the login form (the factories' users have the password ``pw-<name>``);
    return once the browser has left the login page and the next one has loaded, so the session
    cookie is set and what is checked next is that page."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(f"{live_server_url}{start}")
    for name, value in (("username", username), ("password", password or f"pw-{username}")):
        field = browser.find_element(By.NAME, name)
        field.clear()
        field.send_keys(value)
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    wait = WebDriverWait(browser, timeout)
    wait.until(lambda d: "/login/" not in d.current_url)
    wait.until(lambda d: d.execute_script("return document.readyState") == "complete")


def page_widths(browser: Any, *, against: str = "client") -> tuple[int, int]:
    """The page's width and the width it has to fit in: ``client`` is the document's
    clientWidth (the window less its vertical scrollbar's 15 px: a page wider than that scrolls
    sideways all the same), ``window`` is window.innerWidth (scrollbar included)."""
    fit = {"client": "document.documentElement.clientWidth", "window": "window.innerWidth"}
    width, inner = browser.execute_script(
        f"return [document.documentElement.scrollWidth, {fit[against]}];"
    )
    return int(width), int(inner)


def too_wide(browser: Any) -> list[str]:
    """The first six elements whose right edge is past the document's clientWidth (tag#id.class
    and their right edge): what a page too wide should be fixed at."""
    return list(
        browser.execute_script(
            "var out = [], inner = document.documentElement.clientWidth;"
            "document.querySelectorAll('body *').forEach(function (e) {"
            "  var r = e.getBoundingClientRect();"
            "  if (r.right > inner + 1 && out.length < 6)"
            "    out.push(e.tagName + '#' + e.id + '.' + e.className + ' ' + Math.round(r.right));"
            "});"
            "return out;"
        )
    )


class BrowserTestCase(StaticLiveServerTestCase):
    """A live server and one headless Chromium for the class's tests, with the helpers the
    browser tests share: fill a field, pick an option, sign in, check the page fits its width.
    Mark the subclass ``browser`` and skip it when ``MISSING``."""

    window: tuple[int, int] = (1366, 768)
    implicit_wait: float = 3
    chromium_flags: tuple[str, ...] = ()
    browser: Any  # Selenium's Chrome driver, started once for the class

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        try:
            cls.browser = start_chromium(*cls.window, extra_flags=cls.chromium_flags)
        except Exception:
            super().tearDownClass()  # the live server's thread, which would outlive the failure
            raise
        cls.browser.implicitly_wait(cls.implicit_wait)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.browser.quit()
        super().tearDownClass()

    def follow(self, element: Any) -> None:
        """Click a link or a submit button and wait for the page it leads to: a click does not
        wait for it, and a test that reads the database next would read it too early."""
        from selenium.common.exceptions import WebDriverException
        from selenium.webdriver.support.ui import WebDriverWait

        def left_the_page(_: Any) -> bool:
            # Chromium says "stale" or "does not belong to the document" once the page changed.
            try:
                element.is_enabled()
            except WebDriverException:
                return True
            return False

        element.click()
        WebDriverWait(self.browser, 15).until(left_the_page)

    def fill(self, name: str, value: str) -> None:
        from selenium.webdriver.common.by import By

        field = self.browser.find_element(By.NAME, name)
        field.clear()
        field.send_keys(value)

    def select(self, name: str, value: str) -> None:
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import Select

        Select(self.browser.find_element(By.NAME, name)).select_by_value(value)

    def log_in(self, username: str, password: str | None = None, **kwargs: Any) -> None:
        log_in(self.browser, self.live_server_url, username, password, **kwargs)

    def message_after_click(self, text: str, timeout: float = 15) -> str:
        """The page's message list once it says ``text``. After a click that posts, the old
        page's message list is still there (the save before left one) until the next page
        replaces it: reading it at once finds the old element, stale a moment later."""
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support import expected_conditions as ec
        from selenium.webdriver.support.ui import WebDriverWait

        where = (By.CSS_SELECTOR, ".messagelist")
        WebDriverWait(self.browser, timeout).until(ec.text_to_be_present_in_element(where, text))
        return str(self.browser.find_element(*where).text)

    def no_horizontal_scroll(self, page: str, *, against: str = "client") -> None:
        """The page does not scroll sideways; else the failure names the elements too wide
        (and whatever ``when_too_wide`` adds: a screenshot, the row at fault)."""
        width, inner = page_widths(self.browser, against=against)
        wide = too_wide(self.browser)
        if width > inner:
            wide += self.when_too_wide(page)
        self.assertLessEqual(width, inner, f"{page} is {width} px wide in {inner}: {wide}")

    def when_too_wide(self, page: str) -> list[str]:
        """What a test adds to a too-wide page's failure before it is raised."""
        return []

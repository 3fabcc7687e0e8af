"""The run page's artifacts browser on an MLflow run, and a closing report shared outside the
team, opened signed out, refused after revocation and after expiry (issue 33 item 4), in
headless Chromium at 1366×768."""

from __future__ import annotations

import struct
import zlib
from datetime import timedelta
from pathlib import Path

import mlflow
import pytest
from django.test import Client
from django.utils import timezone

from campaigns.models import Team
from campaigns.tests.factories import committed_campaign, make_user
from ledger.models import Report, ReportShare
from ledger.services.closing_reports import build
from mlflow_api.tests.live import MlflowLiveCase
from tests.browser import MISSING, BrowserTestCase

BUILD = Path(__file__).resolve().parent.parent / "build"


def tiny_png() -> bytes:
    """A valid 2×2 red PNG, made here (nothing is downloaded)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    raw = b"".join(b"\x00" + b"\xff\x00\x00" * 2 for _ in range(2))
    header = struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )  # fmt: skip


@pytest.mark.browser
@pytest.mark.skipif(MISSING is not None, reason=MISSING or "")
class ArtifactsOfAnMlflowRun(MlflowLiveCase, BrowserTestCase):
    implicit_wait = 5

    def test_the_tree_previews_text_json_and_an_image_and_downloads_a_file(self) -> None:
        from selenium.webdriver.common.by import By

        make_user("pia", team=self.team, role="planner", password="pw-pia")
        image = Path(self.enterContext(_tmp())) / "confusion.png"
        image.write_bytes(tiny_png())
        with self.tracking(self.key):
            mlflow.set_experiment("artifacts")
            with mlflow.start_run(run_name="lora-r16") as started:
                mlflow.log_text("epoch 1 loss 2.3\nepoch 2 loss 1.9\n", "logs/train.log")
                mlflow.log_dict({"f1": 0.81, "labels": ["a", "b"]}, "eval/metrics.json")
                mlflow.log_artifact(str(image), "eval/plots")
                mlflow.log_text("\x00binary", "model/weights.bin")
        run = self.run_row("lora-r16")
        self.assertEqual(run.run_id, started.info.run_id)
        b = self.browser
        self.log_in("pia")
        b.get(f"{self.live_server_url}/admin/campaigns/run/{run.pk}/change/")
        tree = b.find_element(By.ID, "artifacts-tree")
        b.execute_script("arguments[0].scrollIntoView();", tree)
        self.assertIn("4 files", tree.text)
        for folder in ("eval/", "plots/", "logs/", "model/"):
            self.assertIn(folder, tree.text)
        self.assertIn("sha256", tree.text)
        self.no_horizontal_scroll("the run page with its artifacts")
        BUILD.mkdir(exist_ok=True)
        b.save_screenshot(str(BUILD / "i33-artifacts-tree.png"))

        b.find_element(By.LINK_TEXT, "metrics.json").click()
        self.assertIn('"labels": [', b.find_element(By.ID, "artifact-text").text)
        b.back()
        b.find_element(By.LINK_TEXT, "train.log").click()
        self.assertIn("epoch 2 loss 1.9", b.find_element(By.ID, "artifact-text").text)
        b.back()
        b.find_element(By.LINK_TEXT, "confusion.png").click()
        picture = b.find_element(By.ID, "artifact-image")
        self.assertEqual(b.execute_script("return arguments[0].naturalWidth", picture), 2)
        b.save_screenshot(str(BUILD / "i33-artifact-image.png"))
        b.back()
        b.find_element(By.LINK_TEXT, "weights.bin").click()
        self.assertIn("No preview", b.find_element(By.ID, "artifact-no-preview").text)
        download = b.find_element(By.ID, "artifact-download").get_attribute("href")

        reader = Client()
        reader.force_login(self.owner)
        answer = reader.get(download.removeprefix(self.live_server_url))
        self.assertEqual(b"".join(answer.streaming_content), b"\x00binary")
        self.assertIn("attachment", answer["Content-Disposition"])


def _tmp():  # type: ignore[no-untyped-def]
    import tempfile

    return tempfile.TemporaryDirectory(prefix="cd-artifacts-")


@pytest.mark.browser
@pytest.mark.skipif(MISSING is not None, reason=MISSING or "")
class ShareAClosingReport(BrowserTestCase):
    implicit_wait = 5

    def setUp(self) -> None:
        self.team = Team.objects.create(name="nlp")
        make_user("pia", team=self.team, role="planner", password="pw-pia")
        self.campaign = committed_campaign(self.team)
        self.report = build(Report.objects.create(campaign=self.campaign).pk)

    def test_a_member_opens_it_shares_it_and_the_link_is_refused_after_revoke_and_expiry(
        self,
    ) -> None:
        from selenium.webdriver.common.by import By

        b = self.browser
        self.log_in("pia")
        b.get(f"{self.live_server_url}/admin/ledger/report/?campaign__id__exact={self.campaign.pk}")
        b.find_element(By.LINK_TEXT, "open").click()
        self.assertIn("Closing report of", b.find_element(By.ID, "report-banner").text)
        self.assertIn(self.campaign.title, b.page_source)
        b.back()
        b.find_element(By.LINK_TEXT, "share").click()
        self.fill("days", "3")
        self.fill("note", "the reviewer at the funder")
        b.find_element(By.NAME, "_save").click()
        link = b.find_element(By.CSS_SELECTOR, "a.share-link").get_attribute("href")
        b.save_screenshot(str(BUILD / "i33-share-made.png"))

        b.delete_all_cookies()  # signed out, as the person outside the team
        b.get(link)
        self.assertIn("A read-only copy shared by pia", b.find_element(By.ID, "shared-banner").text)
        self.assertIn(self.campaign.title, b.page_source)
        self.no_horizontal_scroll("the shared report")
        BUILD.mkdir(exist_ok=True)
        b.save_screenshot(str(BUILD / "i33-shared-report-signed-out.png"))
        b.get(link[:-6] + "AAAAA/")  # the signature no longer matches
        self.assertEqual(b.find_element(By.ID, "share-refused").text, "This link is not valid.")

        share = ReportShare.objects.get(report=self.report)
        ReportShare.objects.filter(pk=share.pk).update(
            expires_at=timezone.now() - timedelta(minutes=1)
        )
        b.get(link)
        self.assertEqual(b.find_element(By.ID, "share-refused").text, "This link has expired.")
        ReportShare.objects.filter(pk=share.pk).update(
            expires_at=timezone.now() + timedelta(days=1)
        )
        b.get(link)
        self.assertTrue(b.find_elements(By.ID, "shared-banner"))

        self.log_in("pia")
        b.get(f"{self.live_server_url}/admin/ledger/reportshare/")
        b.find_element(By.CSS_SELECTOR, "input.action-select").click()
        self.select("action", "revoke")
        b.find_element(By.NAME, "index").click()
        self.assertIn("is revoked", self.message_after_click("is revoked"))
        b.delete_all_cookies()
        b.get(link)
        refused = b.find_element(By.ID, "share-refused").text
        self.assertEqual(refused, "This link was revoked by the team that shared it.")
        b.save_screenshot(str(BUILD / "i33-shared-report-revoked.png"))

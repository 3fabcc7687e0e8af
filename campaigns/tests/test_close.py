"""Closing a campaign: the answer it bought, who closed it and when (docs/domain.md §15).

Through the API and the admin alike: 409 while draft or already closed, 409 naming the runs
still running unless `stop_running`, and after close no run data, decisions, observed hours or
deliverables, while late ledger entries are still taken and flagged in the closing report.
"""

from __future__ import annotations

import json

from django.test import TestCase
from django.urls import reverse

from campaigns.models import CampaignStatus, Run, RunStatus, Stage, Team
from campaigns.services.campaigns import close_campaign
from campaigns.tests.factories import (
    as_key,
    as_user,
    celery_eager,
    committed_campaign,
    ingest_key,
    make_plannable,
    make_user,
    points,
    post,
    rule_ids,
)
from ledger.models import LedgerEntry

CONCLUSION = "No variant beats the baseline by 1 F1: keep the baseline (a negative result)."


class CloseThroughTheApiTests(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.planner = make_user("pia", team=cls.team)
        cls.viewer = make_user("val", team=cls.team, role="viewer")
        cls.campaign = committed_campaign(cls.team, cls.planner, lots=0, automatic_rules=True)
        cls.rules = rule_ids(cls.campaign)
        cls.key = ingest_key(cls.campaign)
        cls.url = f"/api/v1/campaigns/{cls.campaign.pk}/close/"

    def setUp(self) -> None:
        self.api = as_user(self.planner)

    def close(self, body: object) -> object:
        return post(self.api, self.url, body)

    def test_it_closes_with_the_conclusion_who_and_when(self) -> None:
        answer = self.close({"conclusion": CONCLUSION})
        self.assertEqual(answer.status_code, 200, answer.content)
        body = answer.json()
        self.assertEqual(body["status"], "closed")
        self.assertEqual(body["conclusion"], CONCLUSION)
        self.assertEqual(body["closed_by"], "pia")
        self.assertIsNotNone(body["closed_at"])
        self.campaign.refresh_from_db()
        self.assertEqual(self.campaign.status, CampaignStatus.CLOSED)

    def test_it_refuses_a_missing_or_blank_conclusion_naming_the_field(self) -> None:
        for body in ({}, {"conclusion": "   "}):
            answer = self.close(body)
            self.assertEqual(answer.status_code, 400, body)
            self.assertIn("conclusion", answer.json())
        self.campaign.refresh_from_db()
        self.assertEqual(self.campaign.status, CampaignStatus.COMMITTED)

    def test_it_refuses_a_draft_and_a_second_close(self) -> None:
        draft = make_plannable(self.team, title="Draft")
        answer = post(self.api, f"/api/v1/campaigns/{draft.pk}/close/", {"conclusion": "x"})
        self.assertEqual(answer.status_code, 409)
        self.assertIn("draft", answer.json()["detail"])
        self.assertEqual(self.close({"conclusion": CONCLUSION}).status_code, 200)
        again = self.close({"conclusion": "again"})
        self.assertEqual(again.status_code, 409)
        self.assertIn("already closed", again.json()["detail"])

    def test_a_viewer_cannot_close_and_another_team_gets_404(self) -> None:
        self.assertEqual(post(as_user(self.viewer), self.url, {"conclusion": "x"}).status_code, 403)
        stranger = make_user("sam", team=Team.objects.create(name="vision"))
        self.assertEqual(post(as_user(stranger), self.url, {"conclusion": "x"}).status_code, 404)
        self.assertEqual(post(as_key(self.key), self.url, {"conclusion": "x"}).status_code, 403)

    def test_running_runs_refuse_the_close_by_name_unless_it_stops_them(self) -> None:
        loop = as_key(self.key)
        for run_id in ("pilot-1", "pilot-2"):
            created = post(loop, f"/api/v1/campaigns/{self.campaign.pk}/runs/", {"run_id": run_id})
            self.assertEqual(created.status_code, 201, created.content)
        post(loop, "/api/v1/runs/pilot-2/finish/", {"status": "completed", "observed_hours": 1})
        refused = self.close({"conclusion": CONCLUSION})
        self.assertEqual(refused.status_code, 409)
        self.assertEqual(refused.json()["running_runs"], ["pilot-1"])
        self.assertIn("pilot-1", refused.json()["detail"])

        closed = self.close({"conclusion": CONCLUSION, "stop_running": True})
        self.assertEqual(closed.status_code, 200, closed.content)
        stopped = Run.objects.get(run_id="pilot-1")
        self.assertEqual(stopped.status, RunStatus.STOPPED)
        self.assertIn("campaign was closed by pia", stopped.stop_reason)
        self.assertEqual(Run.objects.get(run_id="pilot-2").status, RunStatus.COMPLETED)

    def test_a_closed_campaign_refuses_run_data_decisions_hours_and_deliverables(self) -> None:
        loop = as_key(self.key)
        post(loop, f"/api/v1/campaigns/{self.campaign.pk}/runs/", {"run_id": "r1"})
        self.assertEqual(
            self.close({"conclusion": CONCLUSION, "stop_running": True}).status_code, 200
        )
        stage = Stage.objects.filter(campaign=self.campaign).first()
        assert stage is not None
        refused = {
            "new run": post(loop, f"/api/v1/campaigns/{self.campaign.pk}/runs/", {"run_id": "r2"}),
            "metrics": post(loop, "/api/v1/runs/r1/metrics/", points(("loss", 1, 2.0))),
            "throughput": post(
                loop, "/api/v1/runs/r1/throughput/", {"tokens_per_second": 10, "gpus": 1}
            ),
            "checkpoint": post(
                loop,
                "/api/v1/runs/r1/checkpoints/",
                {"step": 1, "components": ["model"], "resume_verified": True},
            ),
            "finish": post(loop, "/api/v1/runs/r1/finish/", {"status": "failed"}),
            "decision": post(
                self.api,
                f"/api/v1/campaigns/{self.campaign.pk}/decisions/",
                {"outcome": "continue", "rationale": "pilot fine"},
            ),
            "observed hours": post(
                self.api,
                f"/api/v1/campaigns/{self.campaign.pk}/stages/{stage.pk}/observed/",
                {"observed_hours": "22", "deviation_note": ""},
            ),
            "deliverable": post(
                self.api,
                f"/api/v1/campaigns/{self.campaign.pk}/deliverables/",
                {
                    "kind": "predictions",
                    "corpus": {"name": "tickets", "revision": "abc123"},
                    "files": [{"path": "out/p.jsonl", "size_bytes": 10, "sha256": "a" * 64}],
                    "expected_ids_ok": True,
                    "reload_verified": True,
                },
            ),
        }
        for what, answer in refused.items():
            self.assertEqual(answer.status_code, 409, f"{what}: {answer.content!r}")
            self.assertIn("closed", json.dumps(answer.json()), what)

    def test_late_ledger_entries_are_taken_and_flagged_after_close_in_the_report(self) -> None:
        before = LedgerEntry.objects.filter(campaign=self.campaign).count()
        self.assertEqual(self.close({"conclusion": CONCLUSION}).status_code, 200)
        late = post(
            self.api,
            f"/api/v1/campaigns/{self.campaign.pk}/ledger/",
            {
                "kind": "included",
                "description": "late invoice",
                "amount": "3.50",
                "currency": "USD",
            },
        )
        self.assertEqual(late.status_code, 201, late.content)
        self.assertEqual(LedgerEntry.objects.filter(campaign=self.campaign).count(), before + 1)
        with celery_eager(), self.captureOnCommitCallbacks(execute=True):
            started = post(self.api, f"/api/v1/campaigns/{self.campaign.pk}/reports/")
        self.assertEqual(started.status_code, 202)
        report = self.api.get(f"/api/v1/reports/{started.json()['id']}/json/").json()
        self.assertEqual(report["campaign"]["status"], "closed")
        self.assertEqual(report["campaign"]["conclusion"], CONCLUSION)
        self.assertEqual(report["campaign"]["closed_by"], "pia")
        flags = {e["description"]: e["after_close"] for e in report["costs"]["entries"]}
        self.assertTrue(flags["late invoice"])
        self.assertFalse(any(v for d, v in flags.items() if d != "late invoice"))
        html = self.api.get(f"/api/v1/reports/{started.json()['id']}/html/").content.decode()
        self.assertIn("after close", html)
        self.assertIn(CONCLUSION.split(":")[0], html)


class CloseInTheAdminTests(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.planner = make_user("pia", team=cls.team)
        cls.campaign = committed_campaign(cls.team, cls.planner, lots=0, automatic_rules=True)
        cls.url = reverse("admin:campaigns_campaign_close", args=[cls.campaign.pk])

    def setUp(self) -> None:
        self.client.force_login(self.planner)

    def test_the_campaign_page_offers_close_and_the_form_closes_it(self) -> None:
        page = self.client.get(reverse("admin:campaigns_campaign_change", args=[self.campaign.pk]))
        self.assertContains(page, self.url)
        form = self.client.get(self.url)
        self.assertContains(form, 'name="conclusion"')
        done = self.client.post(self.url, {"conclusion": CONCLUSION})
        self.assertEqual(done.status_code, 302)
        self.campaign.refresh_from_db()
        self.assertEqual(self.campaign.status, CampaignStatus.CLOSED)
        self.assertEqual(self.campaign.closed_by, self.planner)

    def test_it_refuses_what_the_api_refuses(self) -> None:
        blank = self.client.post(self.url, {"conclusion": "  "})
        self.assertEqual(blank.status_code, 200)
        self.assertContains(blank, "This field is required")
        Run.objects.create(
            team=self.team, campaign=self.campaign, run_id="pilot-1", config_digest="x"
        )
        running = self.client.post(self.url, {"conclusion": CONCLUSION})
        self.assertContains(running, "pilot-1")
        self.campaign.refresh_from_db()
        self.assertEqual(self.campaign.status, CampaignStatus.COMMITTED)
        close_campaign(
            campaign=self.campaign, acting_user=self.planner, conclusion="x", stop_running=True
        )
        again = self.client.post(self.url, {"conclusion": CONCLUSION})
        self.assertContains(again, "already closed")

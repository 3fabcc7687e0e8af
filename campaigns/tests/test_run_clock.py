"""Runs measure their own time through the API (docs/domain.md §5.8): a start the client sends,
heartbeats, a finish that measures the hours, the sweep that ends a silent run at its last
heartbeat, a resumed run's segments, and a person's correction."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

from django.test import TestCase, override_settings
from django.utils import timezone

from campaigns import tasks
from campaigns.models import Campaign, Run, RunSegment, Team
from campaigns.selectors.observed_hours import reconciled
from campaigns.services import run_lifecycle
from campaigns.tests.factories import (
    as_key,
    as_user,
    committed_campaign,
    ingest_key,
    make_user,
    points,
    post,
)
from ledger.models import LedgerEntry

RUN = "/api/v1/runs/r1/"
T = timezone.now


def iso(moment: Any) -> str:
    return moment.isoformat()


class RunClockCase(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.planner = make_user("pia", team=cls.team)
        cls.viewer = make_user("vic", team=cls.team, role="viewer")
        # No lots, 2.00 USD per GPU-hour: a finished run's cost is posted to the ledger.
        cls.campaign = committed_campaign(
            cls.team, cls.planner, lots=0, hourly_rate_per_gpu=Decimal("2.00")
        )
        # Committed three hours ago, so a run may say it started since.
        Campaign.objects.filter(pk=cls.campaign.pk).update(committed_at=T() - timedelta(hours=3))
        cls.item = cls.campaign.items.get(name="baseline")

    def setUp(self) -> None:
        self.loop = as_key(ingest_key(self.campaign))

    def open_run(self, **extra: Any) -> Any:
        body = {"run_id": "r1", "variant": self.item.pk, "kind": "full", "gpus": 2, **extra}
        return post(self.loop, f"/api/v1/campaigns/{self.campaign.pk}/runs/", body)

    def the_run(self) -> Run:
        return Run.objects.get(run_id="r1")


class StartAndFinish(RunClockCase):
    def test_a_finish_without_hours_records_the_measured_hours_and_their_cost(self) -> None:
        started = T() - timedelta(hours=2, minutes=15, seconds=9)
        self.assertEqual(self.open_run(started_at=iso(started)).status_code, 201)
        answer = post(self.loop, f"{RUN}finish/", {"status": "completed"})
        self.assertEqual(answer.status_code, 200, answer.content)
        run = answer.json()
        self.assertEqual(run["measured_hours"], "2.25")
        self.assertEqual(run["observed_hours"], "2.25")
        self.assertEqual(run["hours_source"], "measured")
        # 2.25 h × 2 GPUs × 2.00 USD: the ledger holds it once the run finished.
        self.assertEqual(
            run["cost_so_far"], {"amount": "9.00", "currency": "USD", "basis": "hourly"}
        )
        entry = LedgerEntry.objects.get(run__run_id="r1")
        self.assertEqual(entry.amount, Decimal("9.00"))

    def test_the_clients_end_ends_the_hours_and_stated_hours_are_kept_as_stated(self) -> None:
        started = T() - timedelta(hours=1)
        self.open_run(started_at=iso(started))
        ended = started + timedelta(minutes=30)
        body = {"status": "failed", "ended_at": iso(ended), "observed_hours": 0.75}
        run = post(self.loop, f"{RUN}finish/", body).json()
        self.assertEqual((run["measured_hours"], run["observed_hours"]), ("0.50", "0.75"))
        self.assertEqual(run["hours_source"], "stated")
        self.assertEqual(run["ended_at"][:19], iso(ended)[:19])

    def test_a_start_before_the_commit_or_from_the_future_is_refused_naming_it(self) -> None:
        for moment in (T() - timedelta(days=2), T() + timedelta(hours=1)):
            answer = self.open_run(started_at=iso(moment))
            self.assertEqual(answer.status_code, 400)
            self.assertIn("started_at", answer.json())
        self.assertFalse(Run.objects.exists())
        # A client clock a minute ahead is taken as now.
        self.assertEqual(self.open_run(started_at=iso(T() + timedelta(minutes=1))).status_code, 201)
        self.assertLessEqual(self.the_run().started_at, T())

    def test_an_end_before_the_start_is_refused_naming_it_and_nothing_ends(self) -> None:
        self.open_run()
        answer = post(
            self.loop, f"{RUN}finish/", {"status": "completed", "ended_at": "2020-01-01T00:00:00Z"}
        )
        self.assertEqual(answer.status_code, 400)
        self.assertIn("ended_at", answer.json())
        self.assertIsNone(self.the_run().finished_at)

    def test_a_failed_run_opened_again_goes_on_in_a_new_segment(self) -> None:
        first = T() - timedelta(hours=2)
        self.open_run(started_at=iso(first))
        post(
            self.loop,
            f"{RUN}finish/",
            {"status": "failed", "ended_at": iso(first + timedelta(hours=1))},
        )
        again = self.open_run(started_at=iso(T() - timedelta(minutes=30)))
        self.assertEqual((again.status_code, again.json()["status"]), (200, "running"))
        run = post(self.loop, f"{RUN}finish/", {"status": "completed"}).json()
        self.assertEqual([s["hours"] for s in run["segments"]], ["1.00"])
        self.assertEqual(run["measured_hours"], "1.50")
        # Each stretch's cost posted once: 1 h and 0.5 h on 2 GPUs at 2.00.
        amounts = sorted(
            LedgerEntry.objects.filter(run__run_id="r1").values_list("amount", flat=True)
        )
        self.assertEqual(amounts, [Decimal("2.00"), Decimal("4.00")])


class Heartbeats(RunClockCase):
    def test_a_heartbeat_is_heard_without_an_idempotency_key_and_names_a_wrong_gpu_count(
        self,
    ) -> None:
        self.open_run()
        Run.objects.filter(run_id="r1").update(heartbeat_at=T() - timedelta(minutes=5))
        answer = post(self.loop, f"{RUN}heartbeat/", {"gpus": 2})
        self.assertEqual(answer.status_code, 200, answer.content)
        self.assertEqual(answer.json()["status"], "running")
        self.assertLess(T() - self.the_run().heartbeat_at, timedelta(seconds=5))
        wrong = post(self.loop, f"{RUN}heartbeat/", {"gpus": 3})
        self.assertEqual(wrong.status_code, 400)
        self.assertIn("gpus", wrong.json())

    def test_a_finished_run_refuses_a_heartbeat(self) -> None:
        self.open_run()
        post(self.loop, f"{RUN}finish/", {"status": "completed"})
        answer = post(self.loop, f"{RUN}heartbeat/", {})
        self.assertEqual((answer.status_code, answer.json()["status"]), (409, "completed"))

    def test_a_metrics_batch_is_a_heartbeat(self) -> None:
        self.open_run()
        Run.objects.filter(run_id="r1").update(heartbeat_at=T() - timedelta(minutes=5))
        post(self.loop, f"{RUN}metrics/", points(("loss", 1, 2.0)))
        self.assertLess(T() - self.the_run().heartbeat_at, timedelta(seconds=5))


@override_settings(RUN_SILENT_MULTIPLE=3, RUN_SILENT_MIN_SECONDS=60, RUN_HEARTBEAT_SECONDS=10)
class Silence(RunClockCase):
    def silent_since(self, started: Any, heard: Any) -> None:
        self.open_run(started_at=iso(started), heartbeat_seconds=10)
        Run.objects.filter(run_id="r1").update(heartbeat_at=heard)

    def test_a_silent_run_ends_failed_with_its_hours_ending_at_its_last_heartbeat(self) -> None:
        started = T() - timedelta(hours=2)
        self.silent_since(started, started + timedelta(hours=1, minutes=30))
        self.assertEqual(tasks.end_silent_runs.apply().get(), 1)  # the beat task
        run = self.the_run()
        self.assertEqual((run.status, run.ended_silent), ("failed", True))
        self.assertEqual(run.ended_at, started + timedelta(hours=1, minutes=30))
        self.assertEqual(run.observed_hours, Decimal("1.50"))
        self.assertEqual(reconciled(self.campaign).total, Decimal("1.50"))
        self.assertEqual(LedgerEntry.objects.get(run=run).amount, Decimal("6.00"))
        self.assertEqual(run_lifecycle.end_silent_runs(), 0)  # ended once

    def test_a_run_heard_within_the_limit_is_left_running(self) -> None:
        self.silent_since(T() - timedelta(hours=2), T() - timedelta(seconds=50))
        self.assertEqual(run_lifecycle.end_silent_runs(), 0)
        self.assertEqual(self.the_run().status, "running")

    def test_a_stopped_run_gone_silent_stays_stopped_with_its_hours(self) -> None:
        started = T() - timedelta(hours=1)
        self.silent_since(started, started + timedelta(minutes=45))
        post(self.loop, f"{RUN}stop/", {"reason": "diverged"})
        Run.objects.filter(run_id="r1").update(heartbeat_at=started + timedelta(minutes=45))
        run_lifecycle.end_silent_runs()
        run = self.the_run()
        self.assertEqual((run.status, run.observed_hours), ("stopped", Decimal("0.75")))

    def test_a_silent_run_heard_again_goes_on_in_a_segment_from_its_last_heartbeat(self) -> None:
        started = T() - timedelta(hours=2)
        heard = started + timedelta(hours=1)
        self.silent_since(started, heard)
        run_lifecycle.end_silent_runs()
        answer = post(self.loop, f"{RUN}metrics/", points(("loss", 7, 1.5)))
        self.assertEqual(answer.status_code, 201, answer.content)
        run = self.the_run()
        self.assertEqual(run.status, "running")
        segment = RunSegment.objects.get(run=run)
        self.assertEqual((segment.ended_at, segment.hours), (heard, Decimal("1.00")))
        self.assertEqual(run.segment_start, heard)  # no hour lost between the two
        finished = post(self.loop, f"{RUN}finish/", {"status": "completed"}).json()
        self.assertEqual(finished["measured_hours"], "2.00")


class Corrections(RunClockCase):
    def finished_run(self) -> None:
        self.open_run(started_at=iso(T() - timedelta(hours=2)))
        post(self.loop, f"{RUN}finish/", {"status": "completed"})

    def correct(self, client: Any, hours: Any = "1.25", reason: str = "the GPU sat idle") -> Any:
        return post(client, f"{RUN}observed/", {"observed_hours": hours, "observed_reason": reason})

    def test_a_planner_corrects_the_hours_with_a_reason_and_everything_reads_the_correction(
        self,
    ) -> None:
        self.finished_run()
        answer = self.correct(as_user(self.planner))
        self.assertEqual(answer.status_code, 200, answer.content)
        run = answer.json()
        self.assertEqual((run["observed_hours"], run["measured_hours"]), ("1.25", "2.00"))
        self.assertEqual(
            (run["hours_source"], run["observed_reason"]), ("corrected", "the GPU sat idle")
        )
        [kept] = run["hours_corrections"]
        self.assertEqual((kept["before"], kept["after"], kept["made_by"]), ("2.00", "1.25", "pia"))
        self.assertEqual(reconciled(self.campaign).total, Decimal("1.25"))
        self.assertEqual(run["cost_so_far"]["amount"], "5.00")
        # The ledger held 8.00 (2 h × 2 GPUs × 2.00): one entry of -3.00 for the correction.
        amounts = list(LedgerEntry.objects.order_by("id").values_list("amount", flat=True))
        self.assertEqual(amounts, [Decimal("8.00"), Decimal("-3.00")])

    def test_the_run_admin_page_shows_the_clock_and_the_correction(self) -> None:
        self.finished_run()
        self.correct(as_user(self.planner))
        self.client.force_login(self.planner)
        page = self.client.get(f"/admin/campaigns/run/{self.the_run().pk}/change/")
        self.assertEqual(page.status_code, 200)
        for shown in ("started 20", "a person&#x27;s correction", "the GPU sat idle", "pia"):
            self.assertContains(page, shown)

    def test_refused_while_it_runs_without_a_reason_by_a_viewer_or_a_training_loop(self) -> None:
        self.open_run()
        self.assertEqual(self.correct(as_user(self.planner)).status_code, 409)
        post(self.loop, f"{RUN}finish/", {"status": "completed"})
        blank = self.correct(as_user(self.planner), reason="  ")
        self.assertEqual(blank.status_code, 400)
        self.assertIn("observed_reason", blank.json())
        self.assertEqual(self.correct(as_user(self.viewer)).status_code, 403)
        self.assertEqual(self.correct(self.loop).status_code, 403)
        stranger = make_user("sam", team=Team.objects.create(name="other"))
        self.assertEqual(self.correct(as_user(stranger)).status_code, 404)
        self.assertFalse(self.the_run().hours_corrections.exists())

    def test_a_closed_campaign_refuses_a_correction(self) -> None:
        self.finished_run()
        post(
            as_user(self.planner),
            f"/api/v1/campaigns/{self.campaign.pk}/close/",
            {"conclusion": "done"},
        )
        answer = self.correct(as_user(self.planner))
        self.assertEqual(answer.status_code, 409)
        self.assertEqual(self.the_run().observed_hours, Decimal("2.00"))

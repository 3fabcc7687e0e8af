"""A pilot that ends without a throughput of its own gets the one its metrics tell
(docs/domain.md §10.7), through the service a client's report goes through, and the forecast
takes it as any pilot."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

from django.test import TestCase
from django.utils import timezone

from campaigns.models import PlannedItem, Run, Team, ThroughputSample
from campaigns.services import ingest, run_lifecycle
from campaigns.tests.factories import add_points, committed_campaign, make_user
from estimates.selectors.forecast_inputs import compute_forecast


class PilotFromItsMetrics(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        team = Team.objects.create(name="nlp")
        cls.campaign = committed_campaign(team, make_user("pia", team=team))
        cls.item = PlannedItem.objects.get(campaign=cls.campaign, name="baseline")
        PlannedItem.objects.filter(pk=cls.item.pk).update(
            tokens=36_864_000, config={"tokens_per_step": 4096}
        )

    def pilot(self, run_id: str = "p1", kind: str = "pilot") -> Run:
        run, _ = ingest.open_run(self.campaign, run_id=run_id, variant=self.item, kind=kind)
        start = timezone.now() - timedelta(minutes=10)
        # Steps 1 to 101, logged 50 s apart: 2 steps a second.
        add_points(run, [("loss", 1, 2.0)], when=start)
        add_points(run, [("loss", 101, 1.0)], when=start + timedelta(seconds=50))
        return run

    def item_forecast(self) -> tuple[str, float]:
        [found] = [i for i in compute_forecast(self.campaign).items if i.id == self.item.pk]
        return found.time_source, found.forecast_hours

    def test_logged_steps_times_the_items_tokens_per_step_measure_the_pilot(self) -> None:
        self.assertNotEqual(self.item_forecast()[0], "pilot")
        run_lifecycle.finish_run(run=self.pilot(), status="completed")
        sample = ThroughputSample.objects.get(run__run_id="p1")
        self.assertEqual((sample.tokens_per_second, sample.gpus), (8192.0, 1))
        self.assertEqual(sample.measured_seconds, 50.0)
        # 36,864,000 tokens at 8,192 tokens/s: 1.25 h.
        self.assertEqual(self.item_forecast(), ("pilot", 1.25))

    def test_a_throughput_the_loop_reported_wins_and_nothing_is_read(self) -> None:
        run = self.pilot()
        ingest.record_throughput(run, tokens_per_second=1000.0, gpus=1)
        run_lifecycle.finish_run(run=run, status="completed")
        self.assertEqual(
            list(ThroughputSample.objects.values_list("tokens_per_second", flat=True)), [1000.0]
        )

    def test_a_full_run_measures_no_pilot_and_a_silent_pilot_is_read_when_swept(self) -> None:
        run_lifecycle.finish_run(run=self.pilot("f1", kind="full"), status="completed")
        self.assertFalse(ThroughputSample.objects.exists())
        silent = self.pilot("p2")
        now = timezone.now()
        Run.objects.filter(pk=silent.pk).update(
            started_at=now - timedelta(hours=2), heartbeat_at=now - timedelta(hours=1)
        )
        self.assertEqual(run_lifecycle.end_silent_runs(), 1)
        self.assertEqual(ThroughputSample.objects.get().tokens_per_second, 8192.0)
        self.assertEqual(Run.objects.get(pk=silent.pk).observed_hours, Decimal("1.00"))

"""GPU system metrics (issue 33 item 2): the client's NVML sampler with a fake NVML library
loaded the way the real one is (tests/fake_nvml/pynvml.py first on sys.path), MLflow's own
system-metrics logger through the facade, the run page's charts and measured peak memory, and
the idle-GPU alert and stop rule."""

from __future__ import annotations

import importlib
import sys
import time
from datetime import timedelta
from pathlib import Path

import mlflow
from django.test import LiveServerTestCase, SimpleTestCase, TestCase
from django.utils import timezone

from campaign_desk_client import CampaignDesk
from campaign_desk_client import system_metrics as sm
from campaigns.models import MetricSummary, PlannedItem, Run, StopRule, Team
from campaigns.services.plans import commit_plan
from campaigns.tests.factories import (
    add_points,
    committed_campaign,
    ingest_key,
    make_plannable,
    make_run,
    make_user,
)
from ledger.domain import alerts
from ledger.models import Alert
from ledger.services.alerts import scan_alerts
from mlflow_api.tests.live import MlflowLiveCase

FAKE = str(Path(__file__).resolve().parent / "fake_nvml")
GPUS = [
    {"utilization": 91, "memory_used": 20_500_000_000, "power_mw": 301_500},
    {"utilization": 3, "memory_used": 1_000_000_000, "power_mw": None},
]


class FakeNvml:
    """The fake first on sys.path and imported as `pynvml`, as the real one would be; gone
    afterwards (so no other test sees a GPU)."""

    def setUp(self) -> None:
        sys.path.insert(0, FAKE)
        sys.modules.pop("pynvml", None)
        self.nvml = importlib.import_module("pynvml")
        self.nvml.GPUS = [dict(g) for g in GPUS]
        self.addCleanup(self._remove)  # type: ignore[attr-defined]
        super().setUp()  # type: ignore[misc]

    def _remove(self) -> None:
        sys.path.remove(FAKE)
        sys.modules.pop("pynvml", None)


class SamplerTests(FakeNvml, SimpleTestCase):
    def test_a_sample_names_each_gpus_utilisation_memory_and_power_as_mlflow_does(self) -> None:
        nvml = sm.load_nvml()
        assert nvml is not None
        self.assertTrue(nvml.FAKE)
        self.assertEqual(
            sm.read_gpus(nvml),
            {
                "system/gpu_0_utilization_percentage": 91.0,
                "system/gpu_0_memory_usage_megabytes": 20_500.0,
                "system/gpu_0_power_usage_watts": 301.5,
                # GPU 1 reports no power (NVMLError, as such boards do): left out.
                "system/gpu_1_utilization_percentage": 3.0,
                "system/gpu_1_memory_usage_megabytes": 1_000.0,
            },
        )

    def test_samples_are_numbered_and_drained_once(self) -> None:
        nvml = sm.load_nvml()
        sampler = sm.GpuSampler(nvml, interval=3600).start()
        sampler.sample()
        points = sampler.drain()
        sampler.close()
        self.assertEqual(sorted({p["step"] for p in points}), [0, 1])
        self.assertEqual(len(points), 10)
        self.assertEqual(sampler.drain(), [])


class NoNvmlTests(SimpleTestCase):
    def test_without_nvml_nothing_is_sampled(self) -> None:
        sys.modules.pop("pynvml", None)
        self.assertIsNone(sm.load_nvml())

        class Loop:
            samplers: list[object] = []

        self.assertIsNone(sm.sample_gpus(Loop()))
        self.assertEqual(Loop.samplers, [])


class ClientSamplesOnALiveServer(FakeNvml, LiveServerTestCase):
    def test_a_client_run_logs_utilisation_memory_and_power_and_the_run_page_charts_them(
        self,
    ) -> None:
        team = Team.objects.create(name="nlp")
        owner = make_user("olga", team=team, role="owner")
        campaign = committed_campaign(team)
        item = PlannedItem.objects.get(campaign=campaign, name="baseline")
        desk = CampaignDesk(self.live_server_url, ingest_key(campaign))
        with desk.run(campaign=campaign.pk, run_id="gpu-run", variant=item.pk) as run:
            sampler = sm.sample_gpus(run, interval=1)
            assert sampler is not None
            for step in range(3):
                run.log(step, loss=2.0 - step / 10)
                time.sleep(0.6)
        stored = Run.objects.get(run_id="gpu-run")
        names = dict(MetricSummary.objects.filter(run=stored).values_list("name", "max_value"))
        self.assertEqual(names["system/gpu_0_utilization_percentage"], 91.0)
        self.assertEqual(names["system/gpu_0_power_usage_watts"], 301.5)
        self.assertEqual(names["system/gpu_1_memory_usage_megabytes"], 1_000.0)
        self.assertNotIn("system/gpu_1_power_usage_watts", names)
        self.assertGreaterEqual(sampler.samples, 2)

        self.client.force_login(owner)
        page = self.client.get(f"/admin/campaigns/run/{stored.pk}/change/").content.decode()
        self.assertIn("system-data-0", page)  # the system charts, apart from the curves
        self.assertIn("system/gpu_0_utilization_percentage", page)
        self.assertIn('id="run-memory"', page)
        self.assertIn("20.5 GB", page)  # the measured peak, beside the (absent) estimate


class MlflowSystemMetricsThroughTheFacade(FakeNvml, MlflowLiveCase):
    def test_log_system_metrics_keeps_mlflows_system_metrics_with_the_fake_gpu(self) -> None:
        from mlflow.system_metrics.metrics import gpu_monitor

        importlib.reload(gpu_monitor)  # it imports pynvml when loaded: now the fake
        self.addCleanup(importlib.reload, gpu_monitor)
        mlflow.set_system_metrics_sampling_interval(0.2)
        mlflow.set_system_metrics_samples_before_logging(1)
        self.addCleanup(mlflow.set_system_metrics_sampling_interval, None)
        self.addCleanup(mlflow.set_system_metrics_samples_before_logging, None)
        with self.tracking(self.key):
            mlflow.set_experiment("sysmetrics")
            with mlflow.start_run(run_name="with-system", log_system_metrics=True):
                mlflow.log_metric("loss", 1.5, step=1)
                time.sleep(2.0)
        names = set(
            MetricSummary.objects.filter(run=self.run_row("with-system")).values_list(
                "name", flat=True
            )
        )
        self.assertIn("system/gpu_0_utilization_percentage", names)
        self.assertIn("system/gpu_0_memory_usage_megabytes", names)
        self.assertIn("system/cpu_utilization_percentage", names)
        self.assertIn("loss", names)


class IdleGpuConditionTests(SimpleTestCase):
    def test_idle_when_every_sample_of_the_window_is_under_the_threshold(self) -> None:
        now = timezone.now()
        use = alerts.GpuUse("r1", 2.0, now - timedelta(minutes=45), now - timedelta(minutes=1))
        facts = alerts.CampaignFacts(
            now=now, currency="USD", running_runs=("r1", "r2"), gpu_use=(use,),
            idle=alerts.IdleGpu(percent=5, minutes=30),
        )  # fmt: skip
        (found,) = alerts.idle_conditions(facts, alerts.Limits())
        self.assertEqual((found.kind, found.key), ("idle_gpu", "run:r1:idle"))
        self.assertIn("at most 2% used for the last 30 min (under 5%)", found.message)
        for busy in (
            alerts.GpuUse("r1", 40.0, use.first_at, use.last_at),  # a busy sample
            alerts.GpuUse("r1", 2.0, now - timedelta(minutes=10), use.last_at),  # too recent
            alerts.GpuUse("r1", None, use.first_at, now - timedelta(minutes=40)),  # silent
        ):
            self.assertEqual(
                alerts.idle_conditions(
                    facts.__class__(**{**facts.__dict__, "gpu_use": (busy,)}), alerts.Limits()
                ),
                [],
            )


class IdleGpuRuleTests(TestCase):
    def test_the_scan_raises_idle_gpu_and_the_rule_stops_the_run(self) -> None:
        team = Team.objects.create(name="nlp")
        campaign = make_plannable(team)
        rule = StopRule.objects.create(
            campaign=campaign, kind="idle_gpu", threshold=5, for_minutes=30
        )
        commit_plan(campaign=campaign)
        idle = make_run(campaign, "idle", status="running")
        busy = make_run(campaign, "busy", status="running")
        now = timezone.now()
        for run, recent in ((idle, 3.0), (busy, 60.0)):
            name = "system/gpu_0_utilization_percentage"
            add_points(run, [(name, 0, 90.0)], when=now - timedelta(minutes=45))
            add_points(run, [(name, 1, recent), (name, 2, 1.0)], when=now - timedelta(minutes=5))
        raised = scan_alerts(campaign=campaign, now=now)
        self.assertEqual([(a.kind, a.key) for a in raised], [("idle_gpu", "run:idle:idle")])
        idle.refresh_from_db()
        busy.refresh_from_db()
        self.assertEqual((idle.status, idle.stop_rule_id), ("stopped", rule.pk))
        self.assertIn("idle GPU", idle.stop_reason)
        self.assertEqual(busy.status, "running")
        self.assertEqual(Alert.objects.filter(kind="idle_gpu").count(), 1)


class PeakMemoryBesideTheEstimate(TestCase):
    def test_an_items_measured_peak_stands_beside_the_forecasts_memory_per_device(self) -> None:
        from django.core.management import call_command

        from campaigns.models import Campaign
        from estimates.selectors.memory import campaign_memory, estimated_per_item
        from estimates.services.forecast import ensure_forecast

        call_command("load_demo", verbosity=0)
        campaign = Campaign.objects.get(team__name="demo")
        ensure_forecast(campaign=campaign)
        estimated = estimated_per_item(campaign.pk)
        self.assertTrue(estimated)  # the demo's LoRA items carry an estimate spec
        item = PlannedItem.objects.get(pk=next(iter(estimated)))
        run = make_run(campaign, "measured", variant=item, status="running")
        add_points(run, [("system/gpu_0_memory_usage_megabytes", 0, 15_000.0),
                         ("system/gpu_1_memory_usage_megabytes", 0, 18_000.0)])  # fmt: skip
        row = next(r for r in campaign_memory(campaign) if r.item == item.name)
        self.assertEqual(row.estimated_bytes, estimated[item.pk])
        self.assertEqual(row.measured_bytes, 18_000_000_000)  # the busiest GPU's peak
        self.assertAlmostEqual(row.ratio or 0, 18e9 / estimated[item.pk])

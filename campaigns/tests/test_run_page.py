"""The run admin page: curves, checkpoints, throughput and the stop (docs/domain.md, runs)."""

from __future__ import annotations

import math

from django.test import TestCase
from django.urls import reverse

from campaigns.charts.curves import curve_svg
from campaigns.models import Checkpoint, Run, Team, ThroughputSample
from campaigns.tests.factories import (
    as_key,
    committed_campaign,
    ingest_key,
    make_user,
    points,
    post,
)


class RunPage(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.owner = make_user("olga", team=cls.team, role="owner")
        cls.campaign = committed_campaign(cls.team, cls.owner, lots=0, automatic_rules=True)
        item = cls.campaign.items.get(name="baseline")
        loop = as_key(ingest_key(cls.campaign, cls.owner))
        post(
            loop,
            f"/api/v1/campaigns/{cls.campaign.pk}/runs/",
            {"run_id": "r1", "variant": item.pk, "kind": "pilot", "config": {}},
        )
        post(
            loop, "/api/v1/runs/r1/metrics/", points(*[("loss", s, 3 - s / 100) for s in range(50)])
        )
        post(loop, "/api/v1/runs/r1/metrics/", points(("loss", 50, math.nan)))
        cls.the_run = Run.objects.get(run_id="r1")
        ThroughputSample.objects.create(run=cls.the_run, tokens_per_second=41_500, gpus=8)
        Checkpoint.objects.create(
            run=cls.the_run,
            step=40,
            components=["model", "optimizer"],
            size_bytes=3_200_000_000,
            write_seconds=12.5,
            restore_seconds=30,
            location="s3://ckpt/r1/40",
            resume_verified=True,
        )

    def test_it_draws_the_curve_marks_the_nan_and_the_stop_and_lists_checkpoints(self) -> None:
        self.assertEqual(self.the_run.status, "stopped")
        self.client.force_login(self.owner)
        page = self.client.get(reverse("admin:campaigns_run_change", args=[self.the_run.pk]))
        self.assertEqual(page.status_code, 200)
        html = page.content.decode()
        self.assertIn('class="metric-curve"', html)
        self.assertIn('class="non-finite"', html)
        self.assertIn('class="stop"', html)
        self.assertIn("s3://ckpt/r1/40", html)
        self.assertIn("model, optimizer", html)
        self.assertIn("3.2 GB", html)
        self.assertIn("41,500", html)
        self.assertIn("Non-finite loss", html)


def test_a_curve_breaks_its_line_at_a_non_finite_point() -> None:
    svg = curve_svg("loss", [(0, 1.0), (1, 0.5), (2, math.inf), (3, 0.4), (4, 0.3)], stop_step=4)
    assert svg.count("<polyline") == 2
    assert "Infinity at step 2" in svg
    assert "stopped at step 4" in svg


def test_a_metric_name_is_escaped() -> None:
    assert "<script>" not in curve_svg("<script>", [(0, 1.0)])

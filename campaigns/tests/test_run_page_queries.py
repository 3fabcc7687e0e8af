"""The run pages cost the same SQL queries whatever a run holds or how many runs are listed
(issue 21): the run's page at 2 and at 8 curves (short ones read whole, long ones from their
rollups) with 1 and 12 checkpoints, throughput samples and segments, and the runs' list at 3
and at 30 runs. The curves read together are those read one by one."""

from __future__ import annotations

import math
from datetime import timedelta
from decimal import Decimal

from django.db import connection
from django.test import TestCase
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from campaigns.models import Checkpoint, Run, RunSegment, Team, ThroughputSample
from campaigns.selectors import run_metrics
from campaigns.tests.factories import add_points, committed_campaign, make_run, make_user


def fill(run: Run, *, metrics: int, steps: int, extras: int, long: int = 0) -> None:
    """``metrics`` curves of ``steps`` points and ``long`` of 3,000 (past the page's 600: read
    from rollups), a NaN in each; and ``extras`` checkpoints, throughput samples and ended
    segments."""
    lengths = {f"m{m}": steps for m in range(metrics)} | {f"long{m}": 3000 for m in range(long)}
    add_points(
        run,
        [
            (name, s, math.nan if s == n // 2 else 1.0 / (s + 1))
            for name, n in lengths.items()
            for s in range(n)
        ],
    )
    now = timezone.now()
    for n in range(extras):
        Checkpoint.objects.create(run=run, step=10 * n, components=["model"], location=f"s3://{n}")
        ThroughputSample.objects.create(run=run, tokens_per_second=1000 + n, gpus=1)
        RunSegment.objects.create(
            run=run,
            number=n + 1,
            started_at=now - timedelta(hours=n + 1),
            ended_at=now - timedelta(hours=n),
            status="stopped",
            hours=Decimal("1"),
        )


class RunPagesQueries(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.owner = make_user("olga", team=cls.team, role="owner")
        cls.campaign = committed_campaign(cls.team, cls.owner, lots=0)
        cls.small = make_run(cls.campaign, "small")
        fill(cls.small, metrics=1, steps=20, long=1, extras=1)
        cls.large = make_run(cls.campaign, "large")
        fill(cls.large, metrics=4, steps=50, long=4, extras=12)

    def setUp(self) -> None:
        self.client.force_login(self.owner)

    def queries(self, url: str) -> list[str]:
        self.client.get(url)  # warm the session and content-type caches
        with CaptureQueriesContext(connection) as captured:
            page = self.client.get(url)
        self.assertEqual(page.status_code, 200)
        return [q["sql"] for q in captured.captured_queries]

    def test_a_run_page_costs_the_same_with_8_metrics_and_12_checkpoints_as_with_2_and_1(
        self,
    ) -> None:
        small = self.queries(reverse("admin:campaigns_run_change", args=[self.small.pk]))
        large = self.queries(reverse("admin:campaigns_run_change", args=[self.large.pk]))
        self.assertEqual(len(large), len(small), large)

    def test_the_runs_list_costs_the_same_at_3_and_30_runs(self) -> None:
        url = reverse("admin:campaigns_run_changelist")
        make_run(self.campaign, "third")
        few = self.queries(url)
        for n in range(27):
            fill(make_run(self.campaign, f"more-{n}"), metrics=1, steps=2, extras=2)
        many = self.queries(url)
        self.assertEqual(len(many), len(few), many)

    def test_the_curves_read_together_are_those_read_one_by_one(self) -> None:
        names = [name for name, _count in run_metrics.metric_names(self.large)]
        together = run_metrics.run_series(self.large, [*names, "never-logged"], 600)
        self.assertEqual(sorted(together), names)
        for name in names:
            alone = run_metrics.metric_series(self.large, name, 600)
            # NaN != NaN: compare the points as text.
            self.assertEqual(repr(together[name]), repr(alone), name)

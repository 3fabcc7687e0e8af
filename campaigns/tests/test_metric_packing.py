"""The metric store's two tiers (docs/metric_store.md §3 "Two tiers"): packing a run's hot
points into blocks keeps every point as it was logged, and every reader answers the same
before and after (PostgreSQL: only it packs; on SQLite these tests are skipped)."""

from __future__ import annotations

import json
import math
import unittest
from datetime import timedelta
from typing import Any

from django.db import connection
from django.test import Client, override_settings
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.django import TestCase

from campaigns.domain import metric_rollups as mr
from campaigns.domain.downsampling import token
from campaigns.models import Campaign, MetricBlock, MetricPoint, MetricSummary, Run, Team
from campaigns.selectors import run_metrics
from campaigns.services import ingest, metric_packing, metric_store, run_lifecycle
from campaigns.services.keys import issue_ingest_key
from campaigns.tasks import pack_metric_points, pack_run_points
from campaigns.tests.factories import add_points, celery_eager, committed_campaign, make_run

needs_postgres = unittest.skipUnless(
    connection.vendor == "postgresql", "needs PostgreSQL (only it packs): set DATABASE_URL"
)

values = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.sampled_from([math.nan, math.inf, -math.inf, 0.0]),
)
# Out of order and repeated steps; a client timestamp and a model id now and then.
point = st.tuples(
    st.sampled_from(["m", "n"]),  # no stop rule watches them
    st.one_of(st.integers(0, 40), st.integers(0, 10**12)),
    values,
    st.one_of(st.none(), st.integers(0, 2**50)),
    st.sampled_from(["", "", "", "m-0a1b"]),
)
batches = st.lists(st.lists(point, min_size=1, max_size=90), min_size=1, max_size=5)


def _points(batch: list[Any]) -> list[ingest.Point]:
    return [ingest.Point(n, s, v, token(v) or "", stamp, m) for n, s, v, stamp, m in batch]


def _stored(run: Run) -> list[tuple[Any, ...]]:
    """Every stored point of the run, as the get-history pages give it: both tiers."""
    found = []
    for name in ("m", "n"):
        after = None
        while True:
            page, after = run_metrics.history_page(run, name, limit=37, after=after)
            found += [_fields(p) for p in page]
            if after is None:
                break
    return found


def _fields(p: MetricPoint) -> tuple[Any, ...]:
    return (p.name, p.step, p.seq, repr(p.as_float()), p.created_at, p.timestamp_ms, p.model_id)


def _same(a: list[mr.Point], b: list[mr.Point]) -> bool:
    """Equal series, NaN equal to NaN; -0.0 equal to 0.0 (of tied extremes the rollups keep
    either, as test_metric_rollups compares them)."""
    return [(s, token(v) or v + 0.0) for s, v in a] == [(s, token(v) or v + 0.0) for s, v in b]


@needs_postgres
class PackingKeepsEveryPoint(TestCase):
    campaign: Campaign

    @classmethod
    def setUpTestData(cls) -> None:
        cls.campaign = committed_campaign(Team.objects.create(name="nlp"))

    @settings(max_examples=15, suppress_health_check=[HealthCheck.too_slow], deadline=None)
    @given(parts=batches, retried=st.integers(0, 4), packs=st.lists(st.booleans(), min_size=6))
    def test_points_packed_between_batches_read_back_as_logged(
        self, parts: list[list[Any]], retried: int, packs: list[bool]
    ) -> None:
        run = make_run(self.campaign, f"r{Run.objects.count()}", status="running")
        # A retried batch is stored twice, as the hot table holds it twice.
        parts = [*parts, parts[retried % len(parts)]]
        logged: list[tuple[Any, ...]] = []
        for part, pack in zip(parts, packs, strict=False):
            ingest.append_metrics(run, _points(part))
            # Read before any packing of these rows: what the one-row-per-point table says.
            known = {(x[0], x[2]) for x in logged}
            logged += [
                _fields(p)
                for p in MetricPoint.objects.filter(run=run).select_related("key")
                if (p.name, p.seq) not in known
            ]
            if pack:  # later batches then grow the partial blocks packed here
                metric_packing.pack_points(run_id=run.pk)
        metric_packing.pack_points(run_id=run.pk)
        assert not MetricPoint.objects.filter(run=run).exists()
        assert sum(MetricBlock.objects.filter(run=run).values_list("count", flat=True)) == len(
            logged
        )
        assert _stored(run) == sorted(
            logged, key=lambda x: (x[0] != "m", x[1], x[2])
        )  # each metric in (step, seq) order: history_page's
        every = [(p[1], p[2]) for part in parts for p in part if p[0] == "m"]
        for max_points in (3, 50, 1000):
            got = run_metrics.metric_series(run, "m", max_points).points
            want = mr.series_from_points(every, max_points) if every else []
            assert _same(got, want)

    def test_packing_twice_moves_nothing_the_second_time(self) -> None:
        run = make_run(self.campaign, "twice")
        add_points(run, [("loss", s, 1.0 / (s + 1)) for s in range(200)])
        first = metric_packing.pack_points(run_id=run.pk)
        again = metric_packing.pack_points(run_id=run.pk)
        assert (first.points, first.blocks) == (200, 3)  # blocks of 78 (BLOCK_POINTS)
        assert (again.points, again.blocks) == (0, 0)
        assert [
            (b.block, b.count, b.seq0, b.seqs) for b in MetricBlock.objects.order_by("block")
        ] == [
            (0, 78, 0, None),
            (1, 78, 78, None),
            (2, 44, 156, None),
        ]

    def test_only_the_points_logged_before_the_horizon_move_and_the_rest_stay_hot(self) -> None:
        run = make_run(self.campaign, "horizon", status="running")
        early = timezone.now() - timedelta(hours=2)
        add_points(run, [("loss", s, 1.0) for s in range(100)], when=early)
        add_points(run, [("loss", s, 2.0) for s in range(100, 130)])
        moved = metric_packing.pack_points(run_id=run.pk, older_than=early + timedelta(hours=1))
        assert moved.points == 100
        assert sorted(MetricPoint.objects.filter(run=run).values_list("seq", flat=True)) == list(
            range(100, 130)
        )


@needs_postgres
class EveryReaderAnswersAsBeforePacking(TestCase):
    team: Team
    campaign: Campaign
    raw: str
    traced: Run

    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="cv")
        cls.campaign = committed_campaign(cls.team)
        item = cls.campaign.items.get(name="baseline")
        _key, cls.raw = issue_ingest_key(campaign=cls.campaign, item=item)
        cls.traced, _ = ingest.open_run(cls.campaign, run_id="r-1", variant=item)
        early = timezone.now() - timedelta(hours=3)
        # An older part, out of order with repeated steps, non-finite values, MLflow marks.
        older = [
            ingest.Point("loss", (s * 7) % 1500, v, token(v) or "", 1_700_000_000_000 + s, m)
            for s in range(3000)
            for v, m in [
                (math.nan if s % 97 == 0 else (math.inf if s % 89 == 0 else 3 - s / 1e3), "")
            ]
        ]
        for start in range(0, 3000, 1000):
            ingest.store_points(cls.traced, older[start : start + 1000], early)
        newer = [ingest.Point("loss", 1500 + s, 0.5, "", None, "m-0a") for s in range(40)]
        ingest.store_points(cls.traced, newer, timezone.now())
        ingest.store_points(cls.traced, [ingest.Point("acc", 3, 0.9, "")], early)

    def _answers(self) -> list[Any]:
        run = Run.objects.get(pk=self.traced.pk)
        mlflow = Client(HTTP_AUTHORIZATION=f"Bearer {self.raw}")
        answers: list[Any] = [
            repr(run_metrics.metric_series(run, "loss", n).points) for n in (10, 500, 5000)
        ]
        answers.append(repr(run_metrics.run_series(run, ["loss", "acc"], 5000)))
        answers.append(repr(run_metrics.campaign_series(self.campaign.pk, "loss", 4000)))
        answers.append(repr(run_metrics.full_series(run, "loss", non_finite_only=True)))
        shown = run_metrics.metric_series(run, "loss", 5000).points
        answers.append(run_metrics.client_marks(run, "loss", shown))
        answers.append(run_metrics.logged_at(run, "loss", shown))
        answers.append(
            [_fields(p) for ps in run_metrics.last_points([run.pk]).values() for p in ps]
        )
        for limit in (7, 1000):
            after, pages = None, []
            while True:
                page, after = run_metrics.history_page(run, "loss", limit=limit, after=after)
                pages.append(([_fields(p) for p in page], after))
                if after is None:
                    break
            answers.append(pages)
        history = "/mlflow/api/2.0/mlflow/metrics/get-history"
        query: dict[str, Any] = {"run_id": "r-1", "metric_key": "loss", "max_results": 500}
        token_, bodies = None, []
        while True:
            body = json.loads(mlflow.get(history, {**query, "page_token": token_ or ""}).content)
            bodies.append(body)
            token_ = body.get("next_page_token")
            if not token_:
                break
        assert len(bodies) == 7 and len(bodies[0]["metrics"]) == 500  # 3,040 points
        answers.append(bodies)
        answers.append(
            json.loads(mlflow.get("/mlflow/api/2.0/mlflow/runs/get", {"run_id": "r-1"}).content)[
                "run"
            ]["data"].get("metrics")
        )
        return answers

    def test_series_pages_marks_last_points_and_the_mlflow_history_are_unchanged(self) -> None:
        before = self._answers()
        horizon = timezone.now() - timedelta(hours=1)
        # The older part packed, the newer one hot: pages run across the two tiers.
        assert metric_packing.pack_points(run_id=self.traced.pk, older_than=horizon).points == 3001
        assert MetricPoint.objects.filter(run=self.traced).count() == 40
        assert self._answers() == before
        metric_packing.pack_points(run_id=self.traced.pk)
        assert not MetricPoint.objects.filter(run=self.traced).exists()
        assert self._answers() == before


@needs_postgres
class RetentionAndTasks(TestCase):
    def test_retention_drops_the_packed_points_and_keeps_the_curve(self) -> None:
        team = Team.objects.create(name="nlp", metric_retention_days=30)
        run = make_run(committed_campaign(team), "old")
        long_ago = timezone.now() - timedelta(days=40)
        add_points(run, [("loss", s, 1.0 / (s + 1)) for s in range(300)], when=long_ago)
        metric_packing.pack_points(run_id=run.pk, older_than=timezone.now())
        curve = run_metrics.metric_series(run, "loss", 50).points
        dropped = metric_store.drop_old_points(team_id=team.pk, now=timezone.now())
        assert dropped == 300
        assert not MetricBlock.objects.filter(run=run).exists()
        assert not MetricSummary.objects.get(run=run).points_kept
        assert run_metrics.metric_series(run, "loss", 50).points == curve

    @override_settings(METRIC_PACK_AFTER_SECONDS=0)
    def test_the_tasks_pack_once_and_then_find_nothing(self) -> None:
        campaign = committed_campaign(Team.objects.create(name="cv"))
        running = make_run(campaign, "running", status="running")
        done = make_run(campaign, "done")
        add_points(running, [("loss", s, 0.5) for s in range(70)])
        add_points(done, [("loss", s, 0.5) for s in range(10)])
        assert pack_run_points(done.pk) == 10
        assert pack_run_points(done.pk) == 0
        assert pack_metric_points() == 70
        assert pack_metric_points() == 0
        assert not MetricPoint.objects.exists()

    @override_settings(METRIC_PACK_AFTER_SECONDS=0)
    def test_a_finished_runs_points_are_packed_once_the_finish_commits(self) -> None:
        run = make_run(committed_campaign(Team.objects.create(name="nlp")), "r", status="running")
        add_points(run, [("loss", s, 0.5) for s in range(5)])
        with celery_eager(), self.captureOnCommitCallbacks(execute=True):
            run_lifecycle.finish_run(run=run, status="completed")
        assert not MetricPoint.objects.filter(run=run).exists()
        assert MetricBlock.objects.get(run=run).count == 5


class SqliteKeepsOnePlainTable(TestCase):
    @unittest.skipIf(connection.vendor == "postgresql", "SQLite's embedded default")
    def test_packing_is_a_no_op_and_the_points_stay_rows(self) -> None:
        run = make_run(committed_campaign(Team.objects.create(name="nlp")), "r")
        add_points(run, [("loss", s, 0.5) for s in range(100)])
        assert metric_packing.pack_points(run_id=run.pk) == metric_packing.Packed(0, 0)
        assert MetricPoint.objects.filter(run=run).count() == 100
        assert len(run_metrics.full_series(run, "loss")) == 100

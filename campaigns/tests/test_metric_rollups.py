"""The metric store's summaries and rollups (campaigns/domain/metric_rollups.py,
campaigns/services/metric_store.py): the pure fold, and the series read from the rollups equal
to the one the raw points give (docs/metric_store.md §1)."""

from __future__ import annotations

import math
from typing import Any

from django.db import connection
from django.test.utils import CaptureQueriesContext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.django import TestCase

from campaigns.domain import metric_rollups as mr
from campaigns.models import MetricRollup, MetricSummary, Team
from campaigns.selectors import run_metrics
from campaigns.services import ingest
from campaigns.tests.factories import committed_campaign, make_run

values = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.sampled_from([math.nan, math.inf, -math.inf]),
    st.sampled_from([0.0, 1.0, -1.0]),  # ties between extremes
)
# Out of order, repeated and sparse steps across several bucket widths.
steps = st.one_of(st.integers(0, 300), st.integers(0, 5_000_000))
batch = st.lists(st.tuples(steps, values), min_size=1, max_size=60)
batches = st.lists(batch, min_size=1, max_size=6)


def _same(a: list[mr.Point], b: list[mr.Point]) -> bool:
    """Equal series: NaN equal to NaN, and -0.0 to 0.0 (SQLite stores the one as the other)."""
    return [(s, _token(v) or v) for s, v in a] == [(s, _token(v) or v) for s, v in b]


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(batches)
def test_folding_batch_by_batch_equals_folding_every_point(parts: list[list[mr.Point]]) -> None:
    every = [p for part in parts for p in part]
    summary, rollups = None, {}
    for part in parts:
        s = mr.summarize(part)
        assert s is not None
        summary = s if summary is None else mr.merge_summary(summary, s)
        rollups = mr.merge_rollups(rollups, mr.rollup(part))
    whole = mr.summarize(every)
    assert repr(summary) == repr(whole)
    assert repr(sorted(rollups.items())) == repr(sorted(mr.rollup(every).items()))


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.lists(st.tuples(steps, values), min_size=1, max_size=300), st.integers(1, 60))
def test_the_series_keeps_the_last_point_and_the_non_finite_ones(
    points: list[mr.Point], max_points: int
) -> None:
    drawn = mr.series_from_points(points, max_points)
    assert len(drawn) <= max(max_points, 1)
    last_step = max(s for s, _ in points)
    last = [v for s, v in points if s == last_step][-1]
    assert _same([drawn[-1]], [(last_step, last)])
    assert [s for s, _ in drawn] == sorted(s for s, _ in drawn)
    non_finite = [p for p in points if not math.isfinite(p[1])]
    if len(points) > max_points and len(non_finite) <= max_points // 3:
        kept = {(s, repr(v)) for s, v in drawn}
        assert all((s, repr(v)) in kept for s, v in non_finite)


def test_a_million_step_run_reads_a_few_hundred_buckets_at_500() -> None:
    summary = mr.Summary(1_000_000, 0, 999_999, 0.5, 0.0, 1.0, 0)
    level = mr.level_for(summary, 500)
    assert (999_999 >> level) + 1 <= 250
    assert (999_999 >> (level - 2)) + 1 > 250  # the finer level does not fit


class RollupsReadAsRawPoints(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.campaign = committed_campaign(cls.team)

    @settings(max_examples=20, suppress_health_check=[HealthCheck.too_slow], deadline=None)
    @given(parts=batches, retried=st.integers(0, 5), max_points=st.integers(2, 40))
    def test_the_stored_series_is_the_series_of_the_raw_points(
        self, parts: list[list[mr.Point]], retried: int, max_points: int
    ) -> None:
        MetricSummary.objects.all().delete()
        run = make_run(self.campaign, f"r{MetricRollup.objects.count()}", status="running")
        # A retried batch: the same points stored again are folded again, as the raw points are.
        parts = [*parts, parts[retried % len(parts)]]
        for part in parts:
            ingest.append_metrics(run, [ingest.Point("m", s, v, _token(v)) for s, v in part])
        every = [p for part in parts for p in part]
        got = run_metrics.metric_series(run, "m", max_points)
        assert got.count == len(every)
        assert _same(got.points, mr.series_from_points(every, max_points))
        [(name, count)] = run_metrics.metric_names(run)
        assert (name, count) == ("m", len(every))

    def test_a_batch_costs_two_statements_whatever_its_size(self) -> None:
        run = make_run(self.campaign, "big", status="running")
        points = [ingest.Point(n, s, 0.5, "") for n in ("a", "b", "c") for s in range(3000)]
        with CaptureQueriesContext(connection) as ctx:
            ingest.append_metrics(run, points)
        store = [q for q in ctx.captured_queries if "metricsummary" in q["sql"].lower()]
        rollups = [q for q in ctx.captured_queries if "metricrollup" in q["sql"].lower()]
        assert (len(store), len(rollups)) == (1, 1)

    def test_a_long_series_is_read_from_rollups_in_a_few_queries(self) -> None:
        run = make_run(self.campaign, "long", status="running")
        for start in range(0, 20_000, 5_000):
            pts = [ingest.Point("loss", s, 1 / (s + 1), "") for s in range(start, start + 5_000)]
            ingest.append_metrics(run, pts)
        ingest.append_metrics(run, [ingest.Point("loss", 20_000, math.nan, "NaN")])
        with CaptureQueriesContext(connection) as ctx:
            got = run_metrics.metric_series(run, "loss", 500)
        assert len(ctx.captured_queries) == 3  # summary, one level's buckets, non-finite points
        assert got.count == 20_001 and len(got.points) <= 500
        assert got.points[-1][0] == 20_000 and math.isnan(got.points[-1][1])
        assert got.points[0] == (0, 1.0)  # the first bucket's maximum


def _token(value: float) -> Any:
    from campaigns.domain.downsampling import token

    return token(value) or ""


class HistoryPages(TestCase):
    def test_pages_walk_every_point_once_in_step_order_repeated_steps_included(self) -> None:
        team = Team.objects.create(name="cv")
        run = make_run(committed_campaign(team), "paged", status="running")
        steps = [5, 1, 3, 3, 9, 0, 3, 7]
        ingest.append_metrics(
            run, [ingest.Point("m", s, float(i), "") for i, s in enumerate(steps)]
        )
        seen, after = [], None
        while True:
            page, after = run_metrics.history_page(run, "m", limit=3, after=after)
            assert len(page) <= 3
            seen += [(p.step, p.value) for p in page]
            if after is None:
                break
        assert seen == sorted(((s, float(i)) for i, s in enumerate(steps)), key=lambda p: p[0])


def test_zero_and_minus_zero_at_one_step_are_one_point() -> None:
    """Hypothesis found it: the store keeps -0.0 where the raw read had 0.0 (or the other way),
    and the two were drawn as two points at step 0."""
    points = [(0, 0.0), (0, -0.0), (0, 0.0), (0, -0.0)]
    assert mr.series_from_points(points, 2) == [(0, 0.0)]

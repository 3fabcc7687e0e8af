"""The MLflow facade's recognition of a point already stored (campaigns/services/run_log.py)
once the point is packed (docs/metric_store.md §3 "Two tiers"): a retried batch is stored
once, and a point re-sent with a model id (as MLflow's log_model does at the end of
training) links the packed point to the model instead of being stored again. PostgreSQL
only: only it packs (on SQLite these tests are skipped)."""

from __future__ import annotations

import math
import unittest
from collections.abc import Sequence
from typing import Any

from django.db import connection
from django.db.models import Sum
from django.test import TestCase

from campaigns.domain.downsampling import token
from campaigns.models import Campaign, MetricBlock, MetricPoint, Run, Team
from campaigns.selectors import run_metrics
from campaigns.services import ingest, metric_packing, run_log
from campaigns.tests.factories import committed_campaign, make_run

needs_postgres = unittest.skipUnless(
    connection.vendor == "postgresql", "needs PostgreSQL (only it packs): set DATABASE_URL"
)

STAMP = 1_700_000_000_000


def _point(name: str, step: int, value: float, model_id: str = "") -> ingest.Point:
    # MLflow's client always sends a timestamp; one per step here.
    return ingest.Point(name, step, value, token(value) or "", STAMP + step, model_id)


def _with_model(points: Sequence[ingest.Point], model_id: str) -> list[ingest.Point]:
    return [p._replace(model_id=model_id) for p in points]


def _count(run: Run) -> int:
    """Every stored point of the run, both tiers."""
    packed = MetricBlock.objects.filter(run=run).aggregate(n=Sum("count"))["n"] or 0
    return MetricPoint.objects.filter(run=run).count() + packed


def _history(run: Run, name: str) -> list[tuple[Any, ...]]:
    """The metric's points as get-history pages them: (step, seq, value, timestamp, model)."""
    found, after = [], None
    while True:
        page, after = run_metrics.history_page(run, name, limit=50, after=after)
        found += [(p.step, p.seq, repr(p.as_float()), p.timestamp_ms, p.model_id) for p in page]
        if after is None:
            return found


@needs_postgres
class RetriesOfPackedPoints(TestCase):
    campaign: Campaign

    @classmethod
    def setUpTestData(cls) -> None:
        cls.campaign = committed_campaign(Team.objects.create(name="nlp"))

    def setUp(self) -> None:
        self.traced = make_run(self.campaign, "r-1", status="running")

    def log(self, points: Sequence[ingest.Point]) -> int:
        """Points sent through the facade's service; how many of them it stored."""
        return run_log.log_to_run(Run.objects.all(), "r-1", points=points).accepted

    def pack(self) -> None:
        metric_packing.pack_points(run_id=self.traced.pk)
        assert not MetricPoint.objects.filter(run=self.traced).exists()

    def test_a_batch_sent_again_after_packing_is_stored_once(self) -> None:
        batch = [_point(name, s, 1.0 / (s + 1)) for s in range(200) for name in ("m", "n")]
        assert self.log(batch) == 400
        self.pack()
        before = [_history(self.traced, "m"), _history(self.traced, "n")]
        assert self.log(batch) == 0
        assert _count(self.traced) == 400
        assert not MetricPoint.objects.filter(run=self.traced).exists()
        assert [_history(self.traced, "m"), _history(self.traced, "n")] == before
        # Another value or timestamp at a packed step is another point.
        again = [_point("m", 0, 2.0), _point("m", 0, 1.0)._replace(timestamp_ms=STAMP + 7)]
        assert self.log(again) == 2
        assert _count(self.traced) == 402

    def test_points_re_sent_with_a_model_id_after_packing_link_the_packed_points(self) -> None:
        # Block 0 of "m" holds no model id (its array is NULL); "n" already holds one.
        self.log([_point("m", s, 0.5) for s in range(100)])
        self.log([_point("n", 0, 0.1, "m-early"), _point("n", 1, 0.2)])
        self.pack()
        at_step_1 = [_point("m", 1, 0.5), _point("n", 1, 0.2)]
        assert self.log(_with_model(at_step_1, "m-final")) == 0  # what log_model re-sends
        assert _count(self.traced) == 102
        m = _history(self.traced, "m")
        assert [x[4] for x in m] == ["", "m-final"] + [""] * 98
        assert [x[4] for x in _history(self.traced, "n")] == ["m-early", "m-final"]
        # The link is kept: sending the points again, with or without it, changes nothing.
        assert self.log(_with_model(at_step_1, "m-final")) == 0
        assert self.log(at_step_1) == 0
        assert _history(self.traced, "m") == m and _count(self.traced) == 102

    def test_a_retried_batch_of_packed_and_hot_points_stores_only_the_new_point(self) -> None:
        packed = [_point("m", s, s / 10) for s in range(90)]
        hot = [_point("m", s, s / 10) for s in range(90, 120)]
        self.log(packed)
        self.pack()
        self.log(hot)
        assert MetricPoint.objects.filter(run=self.traced).count() == 30
        new = _point("m", 120, 12.0)
        assert self.log([*packed[-5:], *hot, new]) == 1
        assert _count(self.traced) == 121
        # Re-sent with a model id across the two tiers: every one linked, none stored.
        assert self.log(_with_model([packed[3], packed[85], hot[0], new], "m-9")) == 0
        linked = [x[0] for x in _history(self.traced, "m") if x[4] == "m-9"]
        assert linked == [3, 85, 90, 120]
        assert _count(self.traced) == 121

    def test_non_finite_packed_points_are_recognised_nan_equal_to_nan(self) -> None:
        batch = [
            _point("m", 0, math.nan),
            _point("m", 1, math.inf),
            _point("m", 2, -math.inf),
            _point("m", 3, 0.25),
        ]
        self.log(batch)
        self.pack()
        assert self.log(batch) == 0
        assert self.log(_with_model(batch[:2], "m-nan")) == 0
        assert _count(self.traced) == 4
        assert _history(self.traced, "m") == [
            (0, 0, "nan", STAMP, "m-nan"),
            (1, 1, "inf", STAMP + 1, "m-nan"),
            (2, 2, "-inf", STAMP + 2, ""),
            (3, 3, "0.25", STAMP + 3, ""),
        ]

    def test_a_model_id_lands_on_its_point_in_a_block_whose_seqs_have_a_gap(self) -> None:
        self.log([_point("m", s, s / 10) for s in range(10)])
        MetricPoint.objects.filter(run=self.traced, step=4).delete()  # seqs 0-3, 5-9
        self.pack()
        assert MetricBlock.objects.get(run=self.traced).seqs == [0, 1, 2, 3, 5, 6, 7, 8, 9]
        assert self.log([_point("m", 6, 0.6, "m-gap")]) == 0
        linked = [(x[0], x[1]) for x in _history(self.traced, "m") if x[4] == "m-gap"]
        assert linked == [(6, 6)]

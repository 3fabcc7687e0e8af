"""The ingest's hot path (issue 21: 4-client ingest near COPY) takes and refuses exactly what it
did before its shortcuts: the batch check's fast path for the common point, and the metric
store's one statement of arrays (campaigns/services/metric_store.py: every name and number
travels inside an array literal, so any name must survive the quoting)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from django.db import connection
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.django import TestCase

from campaigns.models import Campaign, MetricSummary, Team
from campaigns.selectors import run_metrics
from campaigns.services import ingest, metric_batch
from campaigns.services.metric_store import array_literal
from campaigns.tests.factories import committed_campaign, make_run

# --- The batch check: the fast path refuses and accepts as the whole check does -------------

# Mostly the same two names (the fast path takes a name once it was found good in the batch),
# steps at and past their bounds and floats, so nearly every point reaches the fast path's
# tests; now and then anything at all.


def mostly(common: Any, rare: Any, tenths: int = 8) -> Any:
    """`common` in `tenths` of the draws, else `rare` (one_of would not weight them)."""
    return st.integers(0, 9).flatmap(lambda i: common if i < tenths else rare)


odd_names = st.one_of(
    st.sampled_from([" loss", "", "a\tb", "x" * 101, "x" * 100, "x" * 250]),
    st.text(max_size=8),
    st.integers(),
    st.lists(st.integers(), max_size=1),  # unhashable: never looked up as a name
    st.none(),
)
names = mostly(st.sampled_from(["loss", "lr"]), odd_names)
bounds = st.sampled_from([0, 1, -1, 2**63 - 1, 2**63, -(2**63), -(2**63) - 1, True, False])
steps = mostly(bounds, st.one_of(st.integers(), st.floats(), st.text(max_size=3), st.none()), 6)
special = st.sampled_from([math.nan, math.inf, -math.inf, -0.0, 0.5, 1e308, 5e-324])
odd_values = st.one_of(
    st.sampled_from([10**400, 7, "NaN", "inf", "-Infinity", "+INF", "abc", True]),
    st.integers(),
    st.none(),
)
values = mostly(st.one_of(special, st.floats()), odd_values)
point = st.fixed_dictionaries(
    {"name": names, "step": steps, "value": values}, optional={"extra": st.integers()}
)
sparse = st.fixed_dictionaries({}, optional={"name": names, "step": steps, "value": values})
items = st.lists(
    mostly(point, st.one_of(sparse, st.integers(), st.lists(st.integers()))), max_size=30
)


def _each_point_the_whole_way(items: list[Any], max_name: int, min_step: int) -> Any:
    """check_points as it was before its fast path: every item through _check_point."""
    if len(items) > metric_batch.MAX_POINTS:
        return ("refused", 413)
    points: list[ingest.Point] = []
    errors: dict[str, Any] = {}
    names_seen: dict[str, str] = {}
    for index, item in enumerate(items):
        if type(item) is not dict:
            errors[str(index)] = {"non_field_errors": ["Expected {name, step, value}."]}
        else:
            got, problems = metric_batch._check_point(item, names_seen, max_name, min_step)
            if got is not None:
                points.append(got)
                continue
            errors[str(index)] = problems
        if len(errors) >= metric_batch.MAX_ERRORS:
            break
    if errors:
        return ("refused", 400, {"points": errors})
    return _comparable(points)


def _comparable(points: list[ingest.Point]) -> list[tuple[Any, ...]]:
    # NaN is not equal to itself: compare values by their text (and type), -0.0 apart from 0.0.
    return [(p.name, p.step, repr(p.value), type(p.value), p.token) for p in points]


def _checked(items: list[Any], max_name: int, min_step: int) -> Any:
    try:
        return _comparable(metric_batch.check_points(items, max_name=max_name, min_step=min_step))
    except metric_batch.BatchRefused as exc:
        return ("refused", exc.status) if exc.status == 413 else ("refused", 400, exc.body)


@settings(max_examples=500, deadline=None)
@given(items, st.sampled_from([(100, 0), (250, -(2**63))]))
def test_the_fast_path_takes_and_refuses_what_the_whole_check_does(
    batch: list[Any], limits: tuple[int, int]
) -> None:
    max_name, min_step = limits  # /api/v1/'s, then the MLflow facade's
    assert _checked(batch, max_name, min_step) == _each_point_the_whole_way(
        batch, max_name, min_step
    )


def test_a_bad_point_after_good_ones_is_named_by_its_index_and_field() -> None:
    good = [{"name": "loss", "step": s, "value": 0.5} for s in range(5)]
    with pytest.raises(metric_batch.BatchRefused) as refused:
        metric_batch.check_points([*good, {"name": "loss", "step": -1, "value": 0.5}])
    assert refused.value.status == 400
    assert refused.value.body == {
        "points": {"5": {"step": ["A step is an integer from 0 to 2**63-1."]}}
    }


# --- The store's arrays: any name and number reads back as sent ----------------------------

# Any text a request can carry: JSON parsed by orjson, which refuses a lone surrogate (not
# UTF-8), and no NUL (PostgreSQL's text has none).
texts = st.lists(
    st.one_of(st.none(), st.text(st.characters(codec="utf-8", exclude_characters="\x00")))
)
numbers = st.lists(
    st.one_of(
        st.none(),
        st.floats(allow_nan=False),
        st.sampled_from([0.0, -0.0, 5e-324, 1.7976931348623157e308, -math.inf, math.inf]),
    )
)
integers = st.lists(st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1)))


def _read_back(literal: str, kind: str) -> Any:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT %s::{kind}[]", [literal])
        return cursor.fetchone()[0]


@pytest.mark.postgres
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts, numbers, integers)
@pytest.mark.django_db
def test_array_literals_read_back_as_sent(
    words: list[str | None], floats: list[float | None], ints: list[int | None]
) -> None:
    assert _read_back(array_literal(words, text=True), "text") == words
    back = _read_back(array_literal(floats), "double precision")
    assert [repr(v) for v in back] == [repr(v) for v in floats]  # -0.0 stays -0.0
    assert _read_back(array_literal(ints), "bigint") == ints
    assert _read_back(array_literal([math.nan]), "double precision")[0] != 0  # NaN is NaN


class NamesThatNeedQuoting(TestCase):
    campaign: Campaign

    @classmethod
    def setUpTestData(cls) -> None:
        cls.campaign = committed_campaign(Team.objects.create(name="nlp"))

    def test_every_name_gets_its_own_key_and_its_own_points(self) -> None:
        """Quotes, backslashes, braces, commas and the word NULL are a metric's name as sent
        (the API refuses only control characters and surrounding spaces)."""
        odd = ['a"b', "c\\d", "{e}", "f,g", "NULL", "h i", "ünï", '\\"', "loss"]
        run = make_run(self.campaign, "odd", status="running")
        points = [ingest.Point(n, s, float(s), "") for s in range(3) for n in odd]
        ingest.append_metrics(run, points)
        ingest.append_metrics(run, [ingest.Point(n, 3, math.nan, "NaN") for n in odd])
        assert sorted(run_metrics.metric_names(run)) == sorted((n, 4) for n in odd)
        for name in odd:
            series = run_metrics.metric_series(run, name, 10)
            assert [s for s, _v in series.points] == [0, 1, 2, 3]
            assert math.isnan(series.points[-1][1])
        summary = MetricSummary.objects.get(run=run, name='a"b')
        assert (summary.count, summary.non_finite, summary.min_value) == (4, 1, 0.0)

"""mlflow_api/domain/search_filter.py without a database: the grammar, and the same answers as
MLflow's own in-memory search (mlflow.utils.search_utils, from mlflow-skinny) on random runs and
random filters (hypothesis)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mlflow.entities import Metric, Param, Run, RunData, RunInfo, RunTag
from mlflow.utils.search_utils import SearchUtils

from mlflow_api.domain import search_filter as sf


def facts(run_id: str, start: int, metrics=None, params=None, tags=None, **attributes):  # type: ignore[no-untyped-def]
    return sf.RunFacts(
        run_id=run_id,
        start_time=start,
        metrics=metrics or {},
        params=params or {},
        tags=tags or {},
        attributes=attributes,
    )


def test_clauses_joined_by_and_with_quoted_keys() -> None:
    clauses = sf.parse_filter(
        "metrics.`f1 score` > 0.5 and params.lr = '0.01' AND tags.\"team\" LIKE 'nl%' "
        "and attributes.run_id IN ('a', 'b') and attr.created >= 5 and params.x IS NULL"
    )
    assert clauses == (
        sf.Clause("metric", "f1 score", ">", 0.5),
        sf.Clause("param", "lr", "=", "0.01"),
        sf.Clause("tag", "team", "LIKE", "nl%"),
        sf.Clause("attribute", "run_id", "IN", ("a", "b")),
        sf.Clause("attribute", "start_time", ">=", 5),
        sf.Clause("param", "x", "IS NULL", None),
    )


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("metrics.loss > 1 OR metrics.loss < 0", "AND"),
        ("loss > 1", "<entity>.<key>"),
        ("metrics.loss LIKE '1'", "does not apply"),
        ("params.lr > 1", "does not apply"),
        ("metrics.loss > 'x'", "number"),
        ("attributes.colour = 'red'", "unknown attribute"),
        ("widgets.x = 'y'", "unknown entity"),
        ("attributes.run_id IN ('a'", "not closed"),
    ],
)
def test_unreadable_filters_say_why(text: str, words: str) -> None:
    with pytest.raises(sf.SearchError, match=words):
        sf.parse_filter(text)


def test_order_missing_last_and_pages() -> None:
    runs = [
        facts("a", 3, {"loss": 0.5}),
        facts("b", 2, {"loss": math.nan}),
        facts("c", 1),
        facts("d", 4, {"loss": 0.1}),
    ]
    asc = sf.ordered(runs, sf.parse_order_by(["metrics.loss"]))
    desc = sf.ordered(runs, sf.parse_order_by(["metrics.loss DESC"]))
    assert [r.run_id for r in asc] == ["d", "a", "b", "c"]
    assert [r.run_id for r in desc] == ["a", "d", "b", "c"]
    first, token = sf.page(asc, None, 3)
    rest, end = sf.page(asc, token, 3)
    assert [r.run_id for r in first + rest] == ["d", "a", "b", "c"]
    assert end is None
    with pytest.raises(sf.SearchError):
        sf.page_offset("not a token")


# --- The same answers as MLflow's own search --------------------------------------------------

KEYS = ["loss", "acc", "f1 score"]
TEXT = st.sampled_from(["0.01", "0.1", "adam", "Adam", "sgd", "a_b", "x%y"])
NUMBERS = st.sampled_from([-1.0, 0.0, 0.1, 0.5, 1.0, 2.5])


@st.composite
def runs(draw: st.DrawFn) -> list[tuple[sf.RunFacts, Run]]:
    out = []
    for i in range(draw(st.integers(1, 6))):
        metrics = draw(st.dictionaries(st.sampled_from(KEYS), NUMBERS, max_size=3))
        params = draw(st.dictionaries(st.sampled_from(["lr", "opt"]), TEXT, max_size=2))
        tags = draw(st.dictionaries(st.sampled_from(["team", "opt"]), TEXT, max_size=2))
        status = draw(st.sampled_from(["RUNNING", "FINISHED", "FAILED"]))
        name = draw(TEXT)
        start = draw(st.integers(0, 5))
        run_id = f"r{i}"
        ours = facts(run_id, start, metrics, params, tags, run_name=name, status=status)
        info = RunInfo(run_id, "1", "u", status, start, None, "active", run_name=name)
        data = RunData(
            metrics=[Metric(k, v, 0, 0) for k, v in metrics.items()],
            params=[Param(k, v) for k, v in params.items()],
            tags=[RunTag(k, v) for k, v in tags.items()],
        )
        out.append((ours, Run(info, data)))
    return out


def _quoted(key: str) -> str:
    return f"`{key}`" if " " in key else key


@st.composite
def clause(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["metrics", "params", "tags", "attributes"]))
    if kind == "metrics":
        op = draw(st.sampled_from(["=", "!=", "<", "<=", ">", ">="]))
        return f"metrics.{_quoted(draw(st.sampled_from(KEYS)))} {op} {draw(NUMBERS)}"
    if kind == "attributes":
        key = draw(st.sampled_from(["run_name", "status"]))
        op = draw(st.sampled_from(["=", "!=", "LIKE", "ILIKE"]))
        return f"attributes.{key} {op} '{draw(TEXT)}'"
    key = draw(st.sampled_from(["lr", "opt"] if kind == "params" else ["team", "opt"]))
    op = draw(st.sampled_from(["=", "!=", "LIKE", "ILIKE", "IS NULL", "IS NOT NULL"]))
    if "NULL" in op:
        return f"{kind}.{key} {op}"
    value = draw(st.sampled_from(["0.01", "adam", "%d%", "_dam", "A%", "x%y", "%"]))
    return f"{kind}.{key} {op} '{value}'"


@settings(max_examples=150, deadline=None)
@given(runs(), st.lists(clause(), min_size=1, max_size=3))
def test_filters_answer_as_mlflows_own_search(pairs, clauses) -> None:  # type: ignore[no-untyped-def]
    text = " and ".join(clauses)
    parsed = sf.parse_filter(text)
    ours = {f.run_id for f, _ in pairs if sf.matches(f, parsed)}
    theirs = {r.info.run_id for r in SearchUtils.filter([r for _, r in pairs], text)}
    assert ours == theirs, text


@settings(max_examples=100, deadline=None)
@given(
    runs(),
    st.lists(
        st.sampled_from(
            [
                "metrics.loss",
                "metrics.acc DESC",
                "params.lr",
                "params.opt DESC",
                "attributes.start_time",
                "attributes.run_name DESC",
            ]
        ),
        max_size=2,
    ),
)
def test_order_as_mlflows_own_search(pairs, order_by) -> None:  # type: ignore[no-untyped-def]
    ours = [f.run_id for f in sf.ordered([f for f, _ in pairs], sf.parse_order_by(order_by))]
    theirs = [r.info.run_id for r in SearchUtils.sort([r for _, r in pairs], order_by)]
    assert ours == theirs, order_by

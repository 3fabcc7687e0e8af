"""Cost per accepted deliverable: pure tests, no database."""

from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from campaigns.domain.formatting import format_money
from ledger.domain.cost_per_deliverable import (
    DeliverableFacts,
    Entry,
    MixedCurrencyError,
    reversal_of,
    summarize,
)

LOT_3_DAYS = Decimal("47.14")


def rental(entry_id: int, amount: Decimal = LOT_3_DAYS, currency: str = "USD") -> Entry:
    return Entry(id=entry_id, kind="rental", amount=amount, currency=currency)


def accepted(name: str, revision: str = "r1") -> DeliverableFacts:
    return DeliverableFacts(corpus_name=name, corpus_revision=revision, accepted=True)


def rejected(name: str, *reasons: str) -> DeliverableFacts:
    return DeliverableFacts(
        corpus_name=name, corpus_revision="r1", accepted=False, rejection_reasons=reasons
    )


# --- seed figures --------------------------------------------------------------------------


def test_it_divides_a_47_14_plan_by_two_distinct_accepted_corpora_into_23_57() -> None:
    summary = summarize([rental(1)], [accepted("corpus-a"), accepted("corpus-b")], "USD")

    assert summary.accepted_deliverables == 2
    assert summary.cost_per_accepted == Decimal("23.57")
    assert summary.ratio == "defined"
    assert summary.undefined_reason is None


def test_it_counts_the_same_corpus_accepted_five_times_once() -> None:
    summary = summarize([rental(1)], [accepted("corpus-a")] * 5, "USD")

    assert summary.accepted_deliverables == 1
    assert summary.cost_per_accepted == Decimal("47.14")


def test_it_counts_two_revisions_of_one_corpus_as_two_corpora() -> None:
    summary = summarize(
        [rental(1)], [accepted("corpus-a", "r1"), accepted("corpus-a", "r2")], "USD"
    )

    assert summary.accepted_deliverables == 2


def test_it_leaves_the_ratio_undefined_with_the_full_cost_and_reasons_when_none_accepted() -> None:
    deliverables = [
        rejected("corpus-a", "empty file: out/preds.jsonl (0 bytes)"),
        rejected(
            "corpus-b", "expected identifiers not checked", "empty file: out/preds.jsonl (0 bytes)"
        ),
    ]

    summary = summarize([rental(1)], deliverables, "USD")

    assert summary.ratio == "undefined"
    assert summary.cost_per_accepted is None
    assert summary.incurred == LOT_3_DAYS
    assert summary.undefined_reason
    assert "no deliverable was accepted" in summary.undefined_reason
    assert summary.rejection_reasons == (
        "empty file: out/preds.jsonl (0 bytes)",
        "expected identifiers not checked",
    )


def test_it_explains_an_undefined_ratio_when_nothing_was_submitted() -> None:
    summary = summarize([rental(1)], [], "USD")

    assert summary.ratio == "undefined"
    assert summary.undefined_reason is not None
    assert "no deliverable was submitted" in summary.undefined_reason


def test_it_keeps_external_costs_apart_from_the_incurred_cost() -> None:
    external = Entry(id=2, kind="external", amount=Decimal("12.00"), currency="USD")

    summary = summarize([rental(1), external], [accepted("a"), accepted("b")], "USD")

    assert summary.external == Decimal("12.00")
    assert summary.incurred == LOT_3_DAYS
    assert summary.cost_per_accepted == Decimal("23.57")


def test_it_adds_two_3_day_lots_to_94_28() -> None:
    summary = summarize([rental(1), rental(2)], [accepted("a")], "USD")

    assert summary.rental == Decimal("94.28")
    assert summary.incurred == Decimal("94.28")


def test_it_renders_the_api_example_exactly() -> None:
    external = Entry(id=2, kind="external", amount=Decimal("12.00"), currency="USD")

    summary = summarize([rental(1), external], [accepted("a"), accepted("b")], "USD")

    assert summary.to_json_dict() == {
        "currency": "USD",
        "rental": "47.14",
        "included": "0.00",
        "external": "12.00",
        "incurred": "47.14",
        "accepted_deliverables": 2,
        "cost_per_accepted": "23.57",
        "ratio": "defined",
        "undefined_reason": None,
        "rejection_reasons": [],
    }


def test_it_renders_an_undefined_ratio_as_null_never_zero() -> None:
    rendered = summarize([rental(1)], [rejected("a", "run r-1 was stopped")], "USD").to_json_dict()

    assert rendered["cost_per_accepted"] is None
    assert rendered["ratio"] == "undefined"
    assert rendered["incurred"] == "47.14"
    assert rendered["rejection_reasons"] == ["run r-1 was stopped"]


# --- included costs, reversals, currencies -------------------------------------------------


def test_it_folds_included_costs_into_the_incurred_cost() -> None:
    storage = Entry(id=2, kind="included", amount=Decimal("3.00"), currency="USD")

    summary = summarize([rental(1), storage], [accepted("a")], "USD")

    assert summary.incurred == Decimal("50.14")
    assert summary.cost_per_accepted == Decimal("50.14")


def test_it_cancels_an_entry_with_its_reversal_and_keeps_the_correction() -> None:
    wrong = rental(1, Decimal("74.14"))
    undo = reversal_of(wrong, new_id=2)
    corrected = rental(3, LOT_3_DAYS)

    summary = summarize([wrong, undo, corrected], [accepted("a")], "USD")

    assert undo.amount == Decimal("-74.14") and undo.reverses == 1 and undo.kind == "rental"
    assert summary.rental == LOT_3_DAYS


def test_it_refuses_to_sum_mixed_currencies() -> None:
    with pytest.raises(MixedCurrencyError, match="EUR"):
        summarize([rental(1), rental(2, currency="EUR")], [accepted("a")], "USD")


def test_it_refuses_float_amounts() -> None:
    with pytest.raises(ValueError, match="Decimal"):
        Entry(id=1, kind="rental", amount=47.14, currency="USD")  # type: ignore[arg-type]


def test_it_refuses_an_entry_listed_twice() -> None:
    with pytest.raises(ValueError, match="twice"):
        summarize([rental(1), rental(1)], [], "USD")


def test_it_rounds_cost_per_accepted_half_up() -> None:
    summary = summarize([rental(1, Decimal("0.05"))], [accepted("a"), accepted("b")], "USD")

    assert summary.cost_per_accepted == Decimal("0.03")


def test_it_never_renders_negative_zero() -> None:
    assert format_money(Decimal("-0.001")) == "0.00"
    assert format_money(Decimal("0")) == "0.00"


# --- properties ----------------------------------------------------------------------------

amounts = st.decimals(
    min_value=Decimal("-10000"), max_value=Decimal("100000"), places=2, allow_nan=False
)
kinds = st.sampled_from(["rental", "included", "external"])
corpora = st.lists(
    st.tuples(st.sampled_from(["a", "b", "c", "d"]), st.sampled_from(["r1", "r2"]), st.booleans()),
    max_size=12,
)


def build(raw_entries: list[tuple[str, Decimal]]) -> list[Entry]:
    return [
        Entry(id=i, kind=kind, amount=amount, currency="USD")  # type: ignore[arg-type]
        for i, (kind, amount) in enumerate(raw_entries)
    ]


def facts(raw: list[tuple[str, str, bool]]) -> list[DeliverableFacts]:
    return [
        DeliverableFacts(name, rev, ok, () if ok else (f"{name}@{rev} rejected",))
        for name, rev, ok in raw
    ]


# Decimal amounts of up to 14 digits are slow to draw on a loaded machine: the health check's
# timing is not what this property tests.
@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(st.tuples(kinds, amounts), max_size=20), corpora)
def test_it_makes_incurred_the_sum_of_rental_and_included_only(
    raw_entries: list[tuple[str, Decimal]], raw_deliverables: list[tuple[str, str, bool]]
) -> None:
    summary = summarize(build(raw_entries), facts(raw_deliverables), "USD")

    rental_and_included = sum(
        (a for k, a in raw_entries if k in ("rental", "included")), Decimal(0)
    )
    assert summary.incurred == rental_and_included
    assert summary.external == sum((a for k, a in raw_entries if k == "external"), Decimal(0))


@given(st.lists(st.tuples(kinds, amounts), max_size=20), corpora)
def test_it_never_reports_a_cost_per_accepted_when_nothing_was_accepted(
    raw_entries: list[tuple[str, Decimal]], raw_deliverables: list[tuple[str, str, bool]]
) -> None:
    summary = summarize(build(raw_entries), facts(raw_deliverables), "USD")

    if not any(ok for _, _, ok in raw_deliverables):
        assert summary.cost_per_accepted is None
        assert summary.ratio == "undefined"
        assert summary.undefined_reason
    else:
        assert summary.cost_per_accepted is not None
        assert summary.ratio == "defined"
        assert summary.undefined_reason is None


@given(st.lists(st.tuples(kinds, amounts), max_size=20), corpora)
def test_it_multiplies_back_to_the_incurred_cost_within_rounding(
    raw_entries: list[tuple[str, Decimal]], raw_deliverables: list[tuple[str, str, bool]]
) -> None:
    summary = summarize(build(raw_entries), facts(raw_deliverables), "USD")

    distinct = {(n, r) for n, r, ok in raw_deliverables if ok}
    assert summary.accepted_deliverables == len(distinct)
    if summary.cost_per_accepted is not None:
        drift = abs(summary.cost_per_accepted * len(distinct) - summary.incurred)
        assert drift <= Decimal("0.005") * len(distinct)


@given(st.lists(st.tuples(kinds, amounts), min_size=1, max_size=20))
def test_it_sums_an_entry_and_its_reversal_to_nothing(
    raw_entries: list[tuple[str, Decimal]],
) -> None:
    originals = build(raw_entries)
    reversals = [reversal_of(e, new_id=1000 + e.id) for e in originals]

    summary = summarize(originals + reversals, [accepted("a")], "USD")

    assert summary.incurred == 0 and summary.external == 0
    assert summary.to_json_dict()["incurred"] == "0.00"

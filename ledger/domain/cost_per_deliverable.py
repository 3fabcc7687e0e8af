"""Cost per accepted deliverable (pure: no Django, no I/O).

The rule (docs/domain.md §13):

- ``incurred = rental + included``. ``external`` costs are reported apart and never folded in.
- ``accepted_deliverables`` counts DISTINCT accepted corpora, keyed by (name, revision): the same
  corpus accepted five times (e.g. to time it) counts once.
- ``cost_per_accepted = incurred / accepted_deliverables``, quantized to 0.01 with ROUND_HALF_UP.
  With zero accepted the ratio is ``"undefined"``: ``cost_per_accepted`` is None (never zero),
  ``undefined_reason`` says why, ``incurred`` still shows the full cost and the rejection reasons
  are listed. A negative result does not erase a campaign's cost.

Units: money is ``Decimal`` in one currency code (e.g. ``"USD"``); floats are refused. Sums are
kept exact; only ``cost_per_accepted`` and the JSON rendering are rounded (to 2 decimals).

Entries are append-only. A correction is a NEW entry that reverses an old one: same kind and
currency, the NEGATED amount, and ``reverses`` set to the old entry's id (``reversal_of`` builds
it). Reversals are summed like any entry, so an entry and its reversal cancel out.

Entries in another currency than the summary's are refused with MixedCurrencyError (a
ValueError): amounts in different currencies are never added together.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, localcontext
from typing import Final, Literal, TypedDict, get_args

from campaigns.domain.formatting import format_money

EntryKind = Literal["rental", "included", "external"]
Ratio = Literal["defined", "undefined"]

ENTRY_KINDS: Final[tuple[EntryKind, ...]] = get_args(EntryKind)
MONEY_QUANTUM: Final = Decimal("0.01")
_ZERO: Final = Decimal("0.00")
# Wide enough that no realistic ledger total is rounded while it is being added up.
_PRECISION: Final = 60


class MixedCurrencyError(ValueError):
    """Entries in more than one currency were given to one summary."""


@dataclass(frozen=True)
class Entry:
    """One append-only ledger entry. A reversal has a negated amount and ``reverses`` set."""

    id: int
    kind: EntryKind
    amount: Decimal
    currency: str
    reverses: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in ENTRY_KINDS:
            raise ValueError(
                f"entry #{self.id}: unknown kind {self.kind!r}; "
                f"expected one of {', '.join(ENTRY_KINDS)}"
            )
        if not isinstance(self.amount, Decimal):
            # A float amount has already lost cents to binary rounding; refuse it at the door.
            raise ValueError(f"entry #{self.id}: amount must be a Decimal, not {self.amount!r}")
        if not self.amount.is_finite():
            raise ValueError(f"entry #{self.id}: amount must be finite, not {self.amount}")
        if not self.currency.strip():
            raise ValueError(f"entry #{self.id}: currency is required")
        if self.reverses is not None and self.reverses == self.id:
            raise ValueError(f"entry #{self.id} cannot reverse itself")


def reversal_of(entry: Entry, new_id: int) -> Entry:
    """The entry that cancels ``entry``: same kind and currency, negated amount."""
    return Entry(
        id=new_id, kind=entry.kind, amount=-entry.amount, currency=entry.currency, reverses=entry.id
    )


@dataclass(frozen=True)
class DeliverableFacts:
    """A submitted deliverable as the ledger sees it: its corpus and the verdict of its checks."""

    corpus_name: str
    corpus_revision: str
    accepted: bool
    rejection_reasons: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.accepted and self.rejection_reasons:
            raise ValueError("an accepted deliverable cannot carry rejection reasons")

    @property
    def corpus_key(self) -> tuple[str, str]:
        return (self.corpus_name, self.corpus_revision)


class LedgerSummaryJSON(TypedDict):
    """The shape of ``GET /campaigns/{id}/ledger/summary/`` (docs/api.md)."""

    currency: str
    rental: str
    included: str
    external: str
    incurred: str
    accepted_deliverables: int
    cost_per_accepted: str | None
    ratio: Ratio
    undefined_reason: str | None
    rejection_reasons: list[str]


@dataclass(frozen=True)
class LedgerSummary:
    """Totals per kind (exact), distinct accepted corpora and the cost per accepted one."""

    currency: str
    rental: Decimal
    included: Decimal
    external: Decimal
    incurred: Decimal
    accepted_deliverables: int
    cost_per_accepted: Decimal | None
    ratio: Ratio
    undefined_reason: str | None
    rejection_reasons: tuple[str, ...]

    def to_json_dict(self) -> LedgerSummaryJSON:
        """Money as strings with 2 decimals, as in docs/api.md's ledger/summary example."""
        return {
            "currency": self.currency,
            "rental": format_money(self.rental),
            "included": format_money(self.included),
            "external": format_money(self.external),
            "incurred": format_money(self.incurred),
            "accepted_deliverables": self.accepted_deliverables,
            "cost_per_accepted": (
                None if self.cost_per_accepted is None else format_money(self.cost_per_accepted)
            ),
            "ratio": self.ratio,
            "undefined_reason": self.undefined_reason,
            "rejection_reasons": list(self.rejection_reasons),
        }


def _undefined_reason(submitted: int) -> str:
    if submitted == 0:
        return "no deliverable was submitted: the incurred cost stands without a unit"
    noun = "deliverable was" if submitted == 1 else "deliverables were"
    return (
        f"no deliverable was accepted ({submitted} {noun} rejected): "
        "the incurred cost stands without a unit"
    )


def _totals(entries: Iterable[Entry], currency: str) -> dict[EntryKind, Decimal]:
    """Each kind's total in `currency` (call inside the summary's decimal context)."""
    totals: dict[EntryKind, Decimal] = {kind: _ZERO for kind in ENTRY_KINDS}
    seen_ids: set[int] = set()
    foreign: set[str] = set()
    for entry in entries:
        if entry.id in seen_ids:
            raise ValueError(f"entry #{entry.id} is listed twice")
        seen_ids.add(entry.id)
        if entry.currency != currency:
            foreign.add(entry.currency)
            continue
        totals[entry.kind] += entry.amount
    if foreign:
        raise MixedCurrencyError(
            f"the ledger is in {currency} but has entries in {', '.join(sorted(foreign))}: "
            "amounts in different currencies are never summed"
        )
    return totals


def _verdicts(
    deliverables: Iterable[DeliverableFacts],
) -> tuple[int, set[tuple[str, str]], tuple[str, ...]]:
    """How many were submitted, the distinct accepted corpora, the rejection reasons in order."""
    accepted: set[tuple[str, str]] = set()
    reasons: dict[str, None] = {}  # a dict keeps first-seen order while dropping repeats
    submitted = 0
    for deliverable in deliverables:
        submitted += 1
        if deliverable.accepted:
            accepted.add(deliverable.corpus_key)
        else:
            reasons.update(dict.fromkeys(deliverable.rejection_reasons))
    return submitted, accepted, tuple(reasons)


def summarize(
    entries: Iterable[Entry], deliverables: Iterable[DeliverableFacts], currency: str
) -> LedgerSummary:
    """Sum the ledger in ``currency`` and divide the incurred cost by distinct accepted corpora.

    Raises MixedCurrencyError if any entry is in another currency, and ValueError if two entries
    share an id (the same entry would be counted twice).
    """
    if not currency.strip():
        raise ValueError("currency is required")
    with localcontext() as ctx:
        ctx.prec = _PRECISION
        totals = _totals(entries, currency)
        incurred = totals["rental"] + totals["included"]
        submitted, accepted, reasons = _verdicts(deliverables)
        cost_per_accepted: Decimal | None = None
        ratio: Ratio = "undefined"
        undefined_reason: str | None = _undefined_reason(submitted)
        if accepted:
            cost_per_accepted = (incurred / len(accepted)).quantize(
                MONEY_QUANTUM, rounding=ROUND_HALF_UP
            )
            ratio = "defined"
            undefined_reason = None

    return LedgerSummary(
        currency=currency,
        rental=totals["rental"],
        included=totals["included"],
        external=totals["external"],
        incurred=incurred,
        accepted_deliverables=len(accepted),
        cost_per_accepted=cost_per_accepted,
        ratio=ratio,
        undefined_reason=undefined_reason,
        rejection_reasons=reasons,
    )

"""The closing report: the frozen plan set beside what happened, in HTML, Markdown and JSON.

`ledger.services.request_report` records a pending Report and enqueues its build once the
transaction commits; `build(report_id)` (the Celery task's body) collects the figures and stores
the three renderings. `collect(campaign)` reads the campaign in a fixed number of queries: runs,
metric points and checkpoints are aggregated in SQL, never loaded one by one, so the cost of a
report does not grow with the number of runs or points (bench/report/run.py measures it).
Pure computation stays in `ratios` (money, hour ratios), `checks` and `charts`.
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.db.models import Avg, Count, Max, Q, Sum
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.safestring import mark_safe

from campaigns.charts.gantt import GanttLot, GanttStage, gantt_svg
from campaigns.domain import calendar
from campaigns.domain import item_fate as fates
from campaigns.models import (
    Amendment,
    Campaign,
    Checkpoint,
    DecisionPoint,
    ItemStatus,
    MetricPoint,
    PlanBaseline,
    PlannedItem,
    Run,
    RunKind,
    RunStatus,
    Stage,
    ThroughputSample,
    Tier,
)
from estimates.models import Estimate
from ledger.charts import report_charts as charts
from ledger.charts.spend_chart import spend_chart_html
from ledger.domain.cost_per_deliverable import (
    DeliverableFacts,
    Entry,
    LedgerSummary,
    StageHours,
    format_money,
    ratios_by_kind,
    summarize,
)
from ledger.domain.resume_point import CheckpointFacts, ResumeChoice, choose_resume_point
from ledger.models import Deliverable, EntryKind, LedgerEntry, Report, ReportStatus
from ledger.selectors.quality_per_dollar import value_chart_html, value_for_money
from ledger.selectors.spend import spend_over_time

logger = logging.getLogger(__name__)

REPORT_SCHEMA = "campaign-desk/closing-report/1"
FORMATS = ("html", "markdown", "json")
# Which runs a stage of a planned item is made of: their observed hours stand for the stage's
# when nobody recorded the stage's own.
RUN_KIND_FOR_STAGE = {"training": "full", "pilot": "pilot", "inference": "inference"}
_CENT = Decimal("0.01")


# --- Requesting and building ----------------------------------------------------------------


def build(report_id: int) -> Report | None:
    """Build and store report `report_id`; a report already ready is left as it is.

    Idempotent: a message delivered twice (acks_late after a lost worker) rebuilds a report that
    never finished and skips one that did. A failure is recorded on the report, not raised, so
    the request that asked for it can read why.
    """
    with transaction.atomic():
        report = Report.objects.select_for_update().filter(pk=report_id).first()
        if report is None:
            logger.warning("closing report %s no longer exists; nothing to build", report_id)
            return None
        if report.status == ReportStatus.READY:
            return report
        Report.objects.filter(pk=report_id).update(
            status=ReportStatus.RUNNING, started_at=timezone.now(), error=""
        )
    try:
        campaign = Campaign.objects.select_related("team", "committed_by", "closed_by").get(
            pk=report.campaign_id
        )
        data = collect(campaign)
        html = render_html(data)
        markdown = render_markdown(data)
    except Exception as exc:
        logger.exception("closing report %s failed", report_id)
        # Another run of the same report (a redelivery, the stale-report sweep) may have
        # landed it meanwhile: a ready report is never overwritten, so it lands once.
        Report.objects.filter(pk=report_id).exclude(status=ReportStatus.READY).update(
            status=ReportStatus.FAILED,
            error=f"{type(exc).__name__}: {exc}"[:2000],
            finished_at=timezone.now(),
        )
    else:
        Report.objects.filter(pk=report_id).exclude(status=ReportStatus.READY).update(
            status=ReportStatus.READY,
            html=html,
            markdown=markdown,
            data=data,
            error="",
            finished_at=timezone.now(),
        )
    return Report.objects.get(pk=report_id)


def render(data: dict[str, Any], fmt: str) -> str:
    if fmt == "html":
        return render_html(data)
    if fmt == "markdown":
        return render_markdown(data)
    if fmt == "json":
        return render_json(data)
    raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")


def render_json(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def render_markdown(data: dict[str, Any]) -> str:
    return render_to_string("ledger/closing_report.md", {"r": data})


def render_html(data: dict[str, Any]) -> str:
    return render_to_string(
        "ledger/closing_report.html",
        {
            "r": data,
            "timeline": timeline_of(data),
            "costs": costs_of(data),
            # Reports stored before the spend section have none: no chart, not a failure.
            "spend_chart": spend_chart_html(data["spend"]) if data.get("spend") else "",
            "value_chart": (
                value_chart_html(data["value_for_money"]) if data.get("value_for_money") else ""
            ),
            "gantt": mark_safe(gantt_of(data)),  # escaped by campaigns/charts/gantt.py
        },
    )


# --- Formatting helpers ---------------------------------------------------------------------


def _hours(value: Decimal | float | None) -> str | None:
    if value is None:
        return None
    return str(Decimal(str(value)).quantize(_CENT))


def _iso(value: Any) -> str | None:
    """A moment to the minute with its time zone ("2026-11-30 19:06 UTC"): seconds and
    microseconds say nothing a reader of a closing report needs."""
    if not value:
        return None
    return timezone.localtime(value).strftime("%Y-%m-%d %H:%M %Z")


def _percent(delta: Decimal, planned: Decimal) -> str | None:
    if planned == 0:
        return None
    return str((delta / planned * 100).quantize(Decimal("0.1")))


# --- Collecting ----------------------------------------------------------------------------


def collect(campaign: Campaign) -> dict[str, Any]:
    """Everything the closing report says, as plain JSON, in a bounded number of queries."""
    baseline = PlanBaseline.objects.filter(campaign=campaign).first()
    snapshot = baseline.snapshot if baseline is not None else campaign.snapshot()
    currency = campaign.currency

    items = list(PlannedItem.objects.filter(campaign=campaign).order_by("id"))
    stages = list(
        Stage.objects.filter(campaign=campaign).prefetch_related("depends_on").order_by("id")
    )
    entries = list(
        LedgerEntry.objects.filter(campaign=campaign)
        .order_by("created_at", "id")
        .values(
            "id",
            "kind",
            "description",
            "amount",
            "currency",
            "reverses_id",
            "created_at",
            "created_by__username",
        )
    )
    decisions = list(
        DecisionPoint.objects.filter(campaign=campaign)
        .select_related("decided_by")
        .prefetch_related("cut_variants")
        .order_by("created_at", "id")
    )
    amendments = list(
        Amendment.objects.filter(campaign=campaign)
        .select_related("item", "made_by")
        .order_by("made_at", "id")
    )
    runs = Run.objects.filter(campaign=campaign)
    run_groups = list(
        runs.order_by()
        .values("variant_id", "kind", "status")
        .annotate(n=Count("id"), hours=Sum("observed_hours"))
    )
    ended_runs = list(
        runs.filter(status__in=[RunStatus.STOPPED, RunStatus.FAILED])
        .order_by("created_at", "id")
        .values(
            "run_id",
            "variant_id",
            "status",
            "stop_reason",
            "stop_step",
            "stop_rule_id",
            "stop_rule__kind",
            "stopped_at",
        )
    )
    metrics = list(
        MetricPoint.objects.filter(run__campaign=campaign)
        .order_by()
        .values("name")
        .annotate(
            points=Count("id"),
            runs=Count("run_id", distinct=True),
            non_finite=Count("id", filter=~Q(non_finite="")),
        )
        .order_by("name")
    )
    checkpoint_totals = Checkpoint.objects.filter(run__campaign=campaign).aggregate(
        total=Count("id"),
        verified=Count("id", filter=Q(resume_verified=True)),
        runs=Count("run_id", distinct=True),
        mean_write=Avg("write_seconds"),
        max_restore=Max("restore_seconds"),
    )
    verified_checkpoints = list(
        Checkpoint.objects.filter(run__campaign=campaign, resume_verified=True)
        .order_by("-created_at", "-id")
        .values(
            "run__run_id",
            "run__status",
            "step",
            "components",
            "location",
            "size_bytes",
            "write_seconds",
            "restore_seconds",
            "created_at",
        )
    )
    pilot_samples = list(
        ThroughputSample.objects.filter(
            run__campaign=campaign, run__kind=RunKind.PILOT, run__variant__isnull=False
        )
        .filter(Q(tokens_per_second__gt=0) | Q(samples_per_second__gt=0))
        .order_by("created_at", "id")
        .values(
            "run__variant_id",
            "run__run_id",
            "tokens_per_second",
            "samples_per_second",
            "gpus",
            "created_at",
        )
    )
    item_estimates = {
        e["item_id"]: {
            "time_source": e["time_source"],
            "forecast_hours": (e["outputs"] or {}).get("forecast_hours"),
            "note": (e["outputs"] or {}).get("note"),
        }
        for e in Estimate.objects.filter(campaign=campaign, item__isnull=False).values(
            "item_id", "time_source", "outputs"
        )
    }
    deliverables = list(
        Deliverable.objects.filter(campaign=campaign)
        .select_related("run")
        .prefetch_related("files")
        .order_by("created_at", "id")
    )

    items_by_id = {i.pk: i for i in items}
    hours = _hours_section(snapshot, stages, run_groups, items_by_id)
    costs, summary = _costs_section(campaign, snapshot, entries, deliverables)
    return {
        "schema": REPORT_SCHEMA,
        "generated_at": _iso(timezone.now()),
        "campaign": {
            "id": campaign.pk,
            "title": campaign.title,
            "team": campaign.team.name,
            "status": campaign.status,
            "question": campaign.question,
            "decision_threshold": campaign.decision_threshold,
            "corpus": {"name": campaign.corpus_name, "revision": campaign.corpus_revision},
            "expected_deliverables": campaign.expected_deliverables,
            "conclusion": campaign.conclusion or None,
            "committed_at": _iso(campaign.committed_at),
            "committed_by": campaign.committed_by.get_username() if campaign.committed_by else None,
            "closed_at": _iso(campaign.closed_at),
            "closed_by": campaign.closed_by.get_username() if campaign.closed_by else None,
            "baseline": (
                {"created_at": _iso(baseline.created_at), "digest": baseline.digest}
                if baseline is not None
                else None
            ),
        },
        "plan": _plan_section(snapshot, baseline is not None, hours, _lot_hours(campaign)),
        "costs": costs,
        "cost_per_accepted": _cost_per_accepted(campaign, summary),
        # Spend over time to the close (or now): docs/domain.md §18.4.
        "spend": spend_over_time(campaign, campaign.closed_at),
        # Each item's best metric against its cost to the close: docs/domain.md §18.6.
        "value_for_money": value_for_money(campaign, campaign.closed_at),
        "hours": hours,
        "decisions": [
            {
                "label": d.label,
                "outcome": d.outcome,
                "rationale": d.rationale,
                "decided_by": d.decided_by.get_username() if d.decided_by else None,
                "decided_at": _iso(d.decided_at),
                "cut_items": [i.name for i in d.cut_variants.all()],
            }
            for d in decisions
        ],
        "amendments": [
            {
                "item": a.item.name if a.item else None,
                "reason": a.reason,
                "before": a.changes.get("before", {}),
                "after": a.changes.get("after", {}),
                "changes": _changes(a.changes.get("before", {}), a.changes.get("after", {})),
                "made_by": a.made_by.get_username() if a.made_by else None,
                "made_at": _iso(a.made_at),
            }
            for a in amendments
        ],
        "items": _items_section(items, decisions, run_groups, ended_runs),
        "pilots": _pilots_section(items, pilot_samples, item_estimates),
        "runs": _runs_section(run_groups, ended_runs, metrics, items_by_id),
        "deliverables": _deliverables_section(deliverables),
        "checkpoints": _checkpoints_section(
            campaign, items, run_groups, checkpoint_totals, verified_checkpoints
        ),
        "reload_instructions": _reload_instructions(campaign, deliverables, verified_checkpoints),
        "next_campaign": _next_campaign(hours),
        "currency": currency,
    }


def _changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each amended field with its old and new value, ``old → new`` in words ("—": none)."""

    def shown(value: Any) -> str:
        if value is None or value == "" or value == {}:
            return "—"
        return json.dumps(value, sort_keys=True) if isinstance(value, dict | list) else str(value)

    return [
        {
            "field": f,
            "before": before.get(f),
            "after": after.get(f),
            "text": f"{f}: {shown(before.get(f))} → {shown(after.get(f))}",
        }
        for f in sorted(set(before) | set(after))
        if before.get(f) != after.get(f)
    ]


def _pilots_section(
    items: list[PlannedItem],
    samples: Sequence[Mapping[str, Any]],
    estimates: dict[int, dict[str, Any]],
) -> list[dict[str, Any]]:
    """Per item with a pilot: the throughput it measured and the estimate it replaced."""
    latest: dict[int, Mapping[str, Any]] = {}
    for sample in samples:  # oldest first: a newer pilot supersedes
        latest[sample["run__variant_id"]] = sample
    rows = []
    for item in items:
        s = latest.get(item.pk)
        if s is None:
            continue
        cfg = item.config if isinstance(item.config, dict) else {}
        if s["tokens_per_second"]:
            measured, unit = s["tokens_per_second"], "tokens/s"
            assumed = cfg.get("assumed_tokens_per_second")
        else:
            measured, unit = s["samples_per_second"], "samples/s"
            assumed = cfg.get("assumed_samples_per_second")
        estimate = estimates.get(item.pk) or {}
        rows.append(
            {
                "item": item.name,
                "run": s["run__run_id"],
                "measured": f"{measured:,.0f} {unit} on {s['gpus']} GPU(s)",
                "measured_at": _iso(s["created_at"]),
                "replaced": (
                    f"assumed {float(assumed):,.0f} {unit}, {item.planned_hours} h planned"
                    if assumed
                    else f"{item.planned_hours} h planned"
                ),
                "forecast_hours": estimate.get("forecast_hours"),
                "time_source": estimate.get("time_source"),
                "note": estimate.get("note"),
            }
        )
    return rows


def _lot_hours(campaign: Campaign) -> list[str]:
    """Each reserved lot's duration, in the order the baseline froze the lots (by id). Lots are
    frozen with the plan, so their rows still say what was reserved (one query)."""
    return [
        str(hours)
        for hours in campaign.lots.order_by("id").values_list("plan__duration_hours", flat=True)
    ]


def _plan_section(
    snapshot: dict[str, Any],
    committed: bool,
    hours: dict[str, Any],
    lot_hours: Sequence[str] = (),
) -> dict[str, Any]:
    frozen = snapshot.get("lots", [])
    durations: list[str | None] = [None] * len(frozen)
    for index, hours_of_lot in enumerate(lot_hours[: len(frozen)]):
        durations[index] = hours_of_lot
    # The Gantt draws each lot as long as it lasts; a baseline frozen before lots carried their
    # duration gets it from the lot's row.
    lots = [
        {**lot, "duration_hours": lot.get("duration_hours") or hours_}
        for lot, hours_ in zip(frozen, durations, strict=True)
    ]
    totals: dict[str, Decimal] = defaultdict(Decimal)
    for lot in lots:
        totals[lot["currency"]] += Decimal(lot["total"])
    return {
        "committed": committed,
        "note": None
        if committed
        else "The plan was never committed: this is the current draft, not a frozen baseline.",
        "title": snapshot.get("title"),
        "window_hours": _hours(Decimal(snapshot["window_hours"])),
        "budget": snapshot.get("budget"),
        "currency": snapshot.get("currency"),
        "reserved_machine_hours": _hours(Decimal(snapshot.get("reserved_machine_hours", "0"))),
        "planned_calendar_hours": hours["totals"]["planned_calendar_hours"],
        "items": [
            {
                "name": i["name"],
                "role": i["role"],
                "tier": i["tier"],
                "planned_hours": i["planned_hours"],
                "prep_hours": i["prep_hours"],
            }
            for i in snapshot.get("items", [])
        ],
        "stop_rules": snapshot.get("stop_rules", []),
        "lots": lots,
        "lots_total": [
            {"currency": cur, "amount": format_money(amount)} for cur, amount in totals.items()
        ],
    }


def _costs_section(
    campaign: Campaign,
    snapshot: dict[str, Any],
    entries: Sequence[Mapping[str, Any]],
    deliverables: list[Deliverable],
) -> tuple[dict[str, Any], LedgerSummary]:
    facts = [
        DeliverableFacts(
            d.corpus_name,
            d.corpus_revision,
            d.accepted,
            () if d.accepted else tuple(d.rejection_reasons or ()),
        )
        for d in deliverables
    ]
    by_currency: dict[str, list[Entry]] = defaultdict(list)
    for e in entries:
        by_currency[e["currency"]].append(
            Entry(e["id"], e["kind"], e["amount"], e["currency"], e["reverses_id"])
        )
    # Amounts in another currency are never added to the campaign's: each is summed apart.
    summary = summarize(by_currency.get(campaign.currency, []), facts, campaign.currency)
    others = [
        summarize(group, facts, cur).to_json_dict()
        for cur, group in sorted(by_currency.items())
        if cur != campaign.currency
    ]
    reversed_by = {e["reverses_id"]: e["id"] for e in entries if e["reverses_id"]}
    budget = snapshot.get("budget")
    costs = {
        **{
            k: v
            for k, v in summary.to_json_dict().items()
            if k in ("currency", "rental", "included", "external", "incurred")
        },
        "budget": budget,
        "budget_left": (
            format_money(Decimal(budget) - summary.incurred) if budget is not None else None
        ),
        "entries": [
            {
                "id": e["id"],
                "kind": e["kind"],
                "description": e["description"],
                "amount": format_money(e["amount"]),
                "currency": e["currency"],
                "reverses": e["reverses_id"],
                "reversed_by": reversed_by.get(e["id"]),
                "created_at": _iso(e["created_at"]),
                "created_by": e["created_by__username"],
                # Late invoices and reversals still reach a closed campaign's ledger; say so.
                "after_close": campaign.closed_at is not None
                and e["created_at"] > campaign.closed_at,
            }
            for e in entries
        ],
        "included_entries": [e["id"] for e in entries if e["kind"] == EntryKind.INCLUDED],
        "external_entries": [e["id"] for e in entries if e["kind"] == EntryKind.EXTERNAL],
        "other_currencies": others,
        "mixed_currency_note": (
            f"Entries in {', '.join(o['currency'] for o in others)} are listed apart: amounts "
            f"in different currencies are never summed with the {campaign.currency} ledger."
            if others
            else None
        ),
    }
    return costs, summary


def _cost_per_accepted(campaign: Campaign, summary: LedgerSummary) -> dict[str, Any]:
    data: dict[str, Any] = dict(summary.to_json_dict())
    cur = summary.currency
    incurred = format_money(summary.incurred)
    if summary.ratio == "defined":
        noun = "corpus" if summary.accepted_deliverables == 1 else "corpora"
        data["statement"] = (
            f"{format_money(summary.cost_per_accepted or Decimal(0))} {cur} per accepted "
            f"deliverable: {incurred} {cur} incurred over {summary.accepted_deliverables} "
            f"distinct accepted {noun}. External costs "
            f"({format_money(summary.external)} {cur}) are listed apart."
        )
    else:
        data["statement"] = (
            f"Cost per accepted deliverable: undefined ({summary.undefined_reason}). "
            f"Incurred: {incurred} {cur}; the cost stands, a negative result does not erase it."
        )
    data["conclusion"] = campaign.conclusion or None
    if campaign.conclusion and summary.ratio == "undefined":
        # A research decision has no deliverable unit: the conclusion is what was bought.
        data["statement"] += f" What the campaign bought is a decision: {campaign.conclusion}"
    return data


def _hours_section(
    snapshot: dict[str, Any],
    stages: list[Stage],
    run_groups: list[dict[str, Any]],
    items_by_id: dict[int, PlannedItem],
) -> dict[str, Any]:
    window = float(Decimal(snapshot["window_hours"]))
    frozen = {s["id"]: s for s in snapshot.get("stages", [])}
    live = {s.pk: s for s in stages}

    run_hours: dict[tuple[int | None, str], Decimal] = defaultdict(Decimal)
    for group in run_groups:
        if group["hours"] is not None:
            run_hours[(group["variant_id"], group["kind"])] += Decimal(group["hours"])

    rows: list[dict[str, Any]] = []
    claimed: set[tuple[int | None, str]] = set()
    for pk in list(frozen) + [pk for pk in live if pk not in frozen]:
        stage = live.get(pk)
        # The frozen row where there is one; a stage added after commit reserved nothing.
        plan = frozen.get(pk) or stage.as_plan()  # type: ignore[union-attr]
        planned = Decimal(plan["planned_hours"]) if pk in frozen else Decimal(0)
        variant_id, kind = plan.get("variant"), plan["kind"]
        claim = (variant_id, RUN_KIND_FOR_STAGE.get(kind, ""))
        owns_runs = variant_id is not None and bool(claim[1]) and claim not in claimed
        if owns_runs:
            claimed.add(claim)
        observed: Decimal | None = None
        source = None
        if stage is not None and stage.observed_hours is not None:
            observed, source = Decimal(stage.observed_hours), "recorded"
        elif owns_runs and claim in run_hours:
            observed, source = run_hours[claim], "runs"
        delta = observed - planned if observed is not None else None
        needs = observed is not None and Stage(planned_hours=planned).needs_deviation_note(observed)
        note = stage.deviation_note if stage is not None else ""
        variant = items_by_id.get(variant_id) if variant_id else None
        rows.append(
            {
                "id": pk,
                "name": plan["name"],
                "kind": kind,
                "machine": plan["machine"],
                "resource": plan["resource"] or "",
                "variant": variant.name if variant else None,
                "in_baseline": pk in frozen,
                "added_after_commit": pk not in frozen,
                "removed": stage is None,
                "depends_on": list(plan["depends_on"]),
                "planned_hours": _hours(planned),
                "observed_hours": _hours(observed),
                "observed_source": source,
                "deviation_hours": _hours(delta),
                "deviation_percent": _percent(delta, planned) if delta is not None else None,
                "needs_note": needs,
                "deviation_note": note,
                "explained": (not needs) or bool(note.strip()),
            }
        )
    unattributed = sum(
        (h for key, h in run_hours.items() if key not in claimed), start=Decimal(0)
    ).quantize(_CENT)

    planned_calendar, observed_calendar = _place_in_time(rows, window)
    observed_any = any(r["observed_hours"] is not None for r in rows)

    def total(machine: bool, field: str) -> Decimal:
        return sum(
            (Decimal(r[field]) for r in rows if r["machine"] == machine and r[field] is not None),
            start=Decimal(0),
        )

    planned_machine = total(True, "planned_hours")
    observed_machine = total(True, "observed_hours") + unattributed
    return {
        "stages": rows,
        "unattributed_run_hours": _hours(unattributed),
        "totals": {
            "window_hours": _hours(window),
            "reserved_machine_hours": _hours(planned_machine),
            "observed_machine_hours": _hours(observed_machine),
            "machine_deviation_hours": _hours(observed_machine - planned_machine),
            "planned_human_hours": _hours(total(False, "planned_hours")),
            "observed_human_hours": _hours(total(False, "observed_hours")),
            "planned_calendar_hours": _hours(planned_calendar),
            # Observed durations where known, planned ones elsewhere, on the same graph.
            "observed_calendar_hours": _hours(observed_calendar) if observed_any else None,
            "stages": len(rows),
            "stages_observed": sum(1 for r in rows if r["observed_hours"] is not None),
        },
        "deviations": [
            {
                "stage": r["name"],
                "planned_hours": r["planned_hours"],
                "observed_hours": r["observed_hours"],
                "deviation_hours": r["deviation_hours"],
                "deviation_percent": r["deviation_percent"],
                "note": r["deviation_note"],
                "explained": r["explained"],
            }
            for r in rows
            if r["needs_note"]
        ],
        "unexplained_deviations": [r["name"] for r in rows if not r["explained"]],
    }


def _place_in_time(rows: list[dict[str, Any]], window: float) -> tuple[float | None, float | None]:
    """Planned start/end from the frozen stages' schedule; observed ones on the same graph."""
    known = {r["id"] for r in rows}

    def stages_with(durations: dict[int, float]) -> list[calendar.Stage]:
        return [
            calendar.Stage(
                key=str(r["id"]),
                name=r["name"],
                kind=r["kind"],
                machine=r["machine"],
                resource=r["resource"] or None,
                planned_hours=durations[r["id"]],
                depends_on=tuple(str(d) for d in r["depends_on"] if d in known),
            )
            for r in rows
        ]

    planned = {r["id"]: float(Decimal(r["planned_hours"])) for r in rows}
    observed = {r["id"]: float(Decimal(r["observed_hours"] or r["planned_hours"])) for r in rows}
    try:
        plan = calendar.schedule(stages_with(planned), window)
        actual = calendar.schedule(stages_with(observed), window)
    except ValueError as exc:
        for r in rows:
            r.update(planned_start=None, planned_end=None, observed_start=None, observed_end=None)
            r["schedule_error"] = str(exc)
        return None, None
    for r in rows:
        p, a = plan.entry(str(r["id"])), actual.entry(str(r["id"]))
        r["planned_start"], r["planned_end"] = _hours(p.start_hours), _hours(p.end_hours)
        r["critical"] = str(r["id"]) in plan.critical_path
        seen = r["observed_hours"] is not None
        r["observed_start"] = _hours(a.start_hours) if seen else None
        r["observed_end"] = _hours(a.end_hours) if seen else None
    return plan.makespan_hours, actual.makespan_hours


def _run_counts(run_groups: Iterable[dict[str, Any]]) -> dict[int | None, dict[str, Any]]:
    counts: dict[int | None, dict[str, Any]] = defaultdict(
        lambda: {"total": 0, **{s: 0 for s in RunStatus.values}, "observed_hours": Decimal(0)}
    )
    for g in run_groups:
        c = counts[g["variant_id"]]
        c["total"] += g["n"]
        c[g["status"]] += g["n"]
        c["observed_hours"] += Decimal(g["hours"] or 0)
    return counts


def _items_section(
    items: list[PlannedItem],
    decisions: list[DecisionPoint],
    run_groups: list[dict[str, Any]],
    ended_runs: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    counts = _run_counts(run_groups)
    full_counts: dict[int | None, dict[str, int]] = defaultdict(dict)
    for g in run_groups:
        if g["kind"] == RunKind.FULL:
            by_status = full_counts[g["variant_id"]]
            by_status[g["status"]] = by_status.get(g["status"], 0) + g["n"]
    cut_by: dict[int, DecisionPoint] = {}
    for d in decisions:
        for cut in d.cut_variants.all():
            cut_by[cut.pk] = d
    stopped: dict[int | None, list[dict[str, Any]]] = defaultdict(list)
    for r in ended_runs:
        stopped[r["variant_id"]].append(
            {
                "run_id": r["run_id"],
                "status": r["status"],
                "rule": r["stop_rule__kind"],
                "rule_id": r["stop_rule_id"],
                "reason": r["stop_reason"],
                "step": r["stop_step"],
                "at": _iso(r["stopped_at"]),
            }
        )
    tiers: dict[str, list[dict[str, Any]]] = {t: [] for t in Tier.values}
    for item in items:
        c = counts.get(item.pk) or {"total": 0, "observed_hours": Decimal(0)}
        runs = {s: c.get(s, 0) for s in RunStatus.values}
        ended = stopped.get(item.pk, [])
        decision = cut_by.get(item.pk)
        full = full_counts.get(item.pk, {})
        pilots = sum(g["n"] for g in run_groups if g["variant_id"] == item.pk) - sum(full.values())
        # One derivation with the API's item status (campaigns/domain/item_fate.py): pilots never
        # settle it.
        fate = fates.item_fate(cut=item.status == ItemStatus.CUT, full_runs=full)
        if fate == "cut":
            detail = (
                f"cut at the decision '{decision.label}': {decision.rationale}"
                if decision
                else "cut"
            )
        elif fate == "done":
            detail = f"{full['completed']} completed full run(s)"
        elif fate == "stopped":
            detail = (
                "; ".join(
                    f"run {r['run_id']} stopped: {r['reason'] or 'no reason given'}"
                    for r in ended
                    if r["status"] == RunStatus.STOPPED
                )
                or "stopped"
            )
        elif fate == "running":
            detail = f"{full['running']} full run(s) still running"
        elif fate == "failed":
            detail = f"{full['failed']} failed full run(s), none completed"
        elif pilots:
            detail = f"only pilots ran ({pilots}): no full run"
        else:
            detail = "no run was logged for it"
        if fate != "stopped":
            # A fate of done (or cut, running) can hide runs that a rule stopped on the way.
            detail = "; ".join(
                [detail]
                + [
                    f"run {r['run_id']} stopped: {r['reason'] or 'no reason given'}"
                    for r in ended
                    if r["status"] == RunStatus.STOPPED
                ]
            )
        tiers.setdefault(item.tier, []).append(
            {
                "id": item.pk,
                "name": item.name,
                "role": item.role,
                "tier": item.tier,
                "status": item.status,
                "fate": fate,
                "detail": detail,
                "runs": {"total": c["total"], **runs},
                "observed_hours": _hours(c["observed_hours"]),
                "stopped_runs": ended,
            }
        )
    return {
        "tiers": [{"tier": t, "items": rows} for t, rows in tiers.items()],
        "fates": {
            fate: sum(1 for rows in tiers.values() for i in rows if i["fate"] == fate)
            for fate in fates.FATES
        },
    }


def _runs_section(
    run_groups: list[dict[str, Any]],
    ended_runs: Sequence[Mapping[str, Any]],
    metrics: list[dict[str, Any]],
    items_by_id: dict[int, PlannedItem],
) -> dict[str, Any]:
    by_status = {s: 0 for s in RunStatus.values}
    hours = Decimal(0)
    for g in run_groups:
        by_status[g["status"]] += g["n"]
        hours += Decimal(g["hours"] or 0)
    return {
        "total": sum(by_status.values()),
        "by_status": by_status,
        "observed_hours": _hours(hours),
        "metric_points": sum(m["points"] for m in metrics),
        "non_finite_points": sum(m["non_finite"] for m in metrics),
        "metrics": [
            {
                "name": m["name"],
                "points": m["points"],
                "runs": m["runs"],
                "non_finite": m["non_finite"],
            }
            for m in metrics
        ],
        "ended_without_item": [r["run_id"] for r in ended_runs if r["variant_id"] is None],
    }


def _deliverables_section(deliverables: list[Deliverable]) -> dict[str, Any]:
    rows: list[dict[str, Any]] = [
        {
            "id": d.pk,
            "kind": d.kind,
            "corpus": {"name": d.corpus_name, "revision": d.corpus_revision},
            "run": d.run.run_id if d.run else None,
            "files": [
                {"path": f.path, "size_bytes": f.size_bytes, "sha256": f.sha256}
                for f in d.files.all()
            ],
            "expected_ids_ok": d.expected_ids_ok,
            "reload_verified": d.reload_verified,
            "base_revision": d.base_revision or None,
            "accepted": d.accepted,
            "rejection_reasons": list(d.rejection_reasons or []),
            "submitted_at": _iso(d.created_at),
        }
        for d in deliverables
    ]
    return {
        "items": rows,
        "submitted": len(rows),
        "accepted": sum(1 for r in rows if r["accepted"]),
        "distinct_accepted_corpora": len(
            {(r["corpus"]["name"], r["corpus"]["revision"]) for r in rows if r["accepted"]}
        ),
    }


def _checkpoints_section(
    campaign: Campaign,
    items: list[PlannedItem],
    run_groups: list[dict[str, Any]],
    totals: dict[str, Any],
    verified: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    required = list(campaign.required_checkpoint_components or [])
    choice = _resume_choice(campaign, verified)
    usable = [
        c
        for c in verified
        if choice.checkpoint
        and c["run__run_id"] == choice.checkpoint.run_id
        and c["step"] == choice.checkpoint.step
    ]
    best = usable[0] if usable else (verified[0] if verified else None)

    def shown(c: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "run": c["run__run_id"],
            "step": c["step"],
            "components": c["components"],
            "missing": sorted(set(required) - set(c["components"] or [])),
            "location": c["location"],
            "size_bytes": c["size_bytes"],
            "write_seconds": c["write_seconds"],
            "restore_seconds": c["restore_seconds"],
            "at": _iso(c["created_at"]),
        }

    counts = _run_counts(run_groups)
    resume_items = [
        {
            "name": i.name,
            "status": i.status,
            "runs": counts[i.pk]["total"] if i.pk in counts else 0,
            "completed": counts[i.pk][RunStatus.COMPLETED] if i.pk in counts else 0,
        }
        for i in items
        if i.role == "resume_check"
    ]
    if usable:
        statement = (
            f"A resume was verified in a new process: run {best['run__run_id']} at step "  # type: ignore[index]
            f"{best['step']} holds {', '.join(best['components'])}."  # type: ignore[index]
        )
    else:
        statement = "No valid resume point: " + "; ".join(choice.why_not) + "."
    return {
        "required_components": required,
        "total": totals["total"],
        "verified": totals["verified"],
        "runs_with_checkpoints": totals["runs"],
        "mean_write_seconds": (
            round(totals["mean_write"], 1) if totals["mean_write"] is not None else None
        ),
        "max_restore_seconds": totals["max_restore"],
        "usable_resume": bool(usable),
        "best": shown(best) if best else None,
        "resume_items": resume_items,
        "statement": statement,
    }


def _resume_choice(campaign: Campaign, verified: Sequence[Mapping[str, Any]]) -> ResumeChoice:
    """The resume point by the rule of ledger/domain/resume_point.py (verified checkpoints, newest
    first)."""
    return choose_resume_point(
        [
            CheckpointFacts(
                run_id=c["run__run_id"],
                run_status=c["run__status"],
                step=c["step"],
                components=tuple(c["components"] or ()),
                location=c["location"] or "",
                verified=True,
                restore_seconds=c["restore_seconds"],
            )
            for c in verified
        ],
        frozenset(campaign.required_checkpoint_components or ()),
    )


def _reload_instructions(
    campaign: Campaign, deliverables: list[Deliverable], verified: Sequence[Mapping[str, Any]]
) -> list[str]:
    steps = [
        f"Fixed corpus: {campaign.corpus_name} at revision {campaign.corpus_revision}; "
        "use exactly this revision to compare with these results."
    ]
    for d in deliverables:
        if not d.accepted:
            continue
        files = list(d.files.all())
        listing = ", ".join(f"{f.path} (sha256 {f.sha256[:12]}…, {f.size_bytes} B)" for f in files)
        origin = f" from run {d.run.run_id}" if d.run else ""
        step = (
            f"{d.get_kind_display()} for {d.corpus_name}@{d.corpus_revision}{origin}: fetch "
            f"{listing} and check each sha256 before use."
        )
        if d.kind == "adapter":
            step += f" Load the base model at revision {d.base_revision}, then apply the adapter."
        steps.append(step)
    choice = _resume_choice(campaign, verified)
    c = choice.checkpoint
    if c is not None:
        steps.append(
            f"Resume from {c.location} (run {c.run_id}, step {c.step}): it holds "
            f"{', '.join(c.components)}"
            + (
                f" and was restored in {c.restore_seconds:.0f} s in a new process."
                if c.restore_seconds is not None
                else " and was restored in a new process."
            )
        )
    else:
        steps.append(
            "There is no valid resume point: "
            + "; ".join(choice.why_not)
            + ". Plan a resume check before relying on a restart."
        )
    return steps


def _next_campaign(hours: dict[str, Any]) -> dict[str, Any]:
    ratios = ratios_by_kind(
        StageHours(
            r["kind"],
            Decimal(r["planned_hours"]),
            Decimal(r["observed_hours"]) if r["observed_hours"] is not None else None,
        )
        for r in hours["stages"]
    )
    advice = []
    for k in ratios:
        if k.ratio is None:
            advice.append(f"{k.kind}: {k.observed_hours} h observed with nothing planned: plan it.")
        elif k.ratio > Decimal("1.10"):
            advice.append(
                f"{k.kind}: took ×{k.ratio} the plan ({k.observed_hours} h for "
                f"{k.planned_hours} h): reserve ×{k.ratio} next time."
            )
        elif k.ratio < Decimal("0.90"):
            advice.append(
                f"{k.kind}: took ×{k.ratio} the plan: the next estimate can shrink accordingly."
            )
        else:
            advice.append(f"{k.kind}: within 10% of the plan (×{k.ratio}).")
    unobserved = hours["totals"]["stages"] - hours["totals"]["stages_observed"]
    if unobserved:
        advice.append(
            f"{unobserved} stage(s) have no observed hours: record them to sharpen the estimate."
        )
    return {
        "ratios": [
            {
                "kind": k.kind,
                "stages": k.stages,
                "planned_hours": _hours(k.planned_hours),
                "observed_hours": _hours(k.observed_hours),
                "ratio": str(k.ratio) if k.ratio is not None else None,
            }
            for k in ratios
        ],
        "advice": advice,
    }


# --- Charts --------------------------------------------------------------------------------


def timeline_of(data: dict[str, Any]) -> charts.Chart:
    rows = [
        charts.TimelineRow(
            label=r["name"],
            planned_start=float(r["planned_start"]),
            planned_end=float(r["planned_end"]),
            observed_start=float(r["observed_start"]) if r["observed_start"] else None,
            observed_end=float(r["observed_end"]) if r["observed_end"] else None,
            deviates=r["needs_note"],
            machine=r["machine"],
        )
        for r in sorted(
            (r for r in data["hours"]["stages"] if r.get("planned_start") is not None),
            key=lambda r: (Decimal(r["planned_start"]), r["id"]),
        )
    ]
    return charts.timeline_chart(rows, float(data["hours"]["totals"]["window_hours"]))


def gantt_of(data: dict[str, Any]) -> str:
    """The frozen plan's calendar drawn as on the campaign page (campaigns/charts/gantt.py)."""
    stages = [
        GanttStage(
            key=r["name"],
            resource=(r["resource"] or "gpu") if r["machine"] else None,
            start_hours=float(r["planned_start"]),
            end_hours=float(r["planned_end"]),
            critical=bool(r.get("critical")),
        )
        for r in data["hours"]["stages"]
        if r.get("planned_start") is not None
    ]
    if not stages:
        return ""
    lots = [
        GanttLot(label=lot["plan"], hours=float(lot["duration_hours"]), quantity=lot["quantity"])
        for lot in data["plan"].get("lots", [])
        if lot.get("duration_hours")
    ]
    return gantt_svg(stages, float(data["hours"]["totals"]["window_hours"]), lots)


def costs_of(data: dict[str, Any]) -> charts.Chart:
    # Sums only: the cost per accepted deliverable is a ratio, not a sum, and is shown as a
    # figure beside the chart rather than as a bar among them.
    costs = data["costs"]
    rows = [
        charts.CostRow("Rental (committed lots)", Decimal(costs["rental"]), charts.RENTAL),
        charts.CostRow("Included expenses", Decimal(costs["included"]), charts.INCLUDED),
        charts.CostRow("Incurred (rental + included)", Decimal(costs["incurred"]), charts.INCURRED),
        charts.CostRow("External (listed apart)", Decimal(costs["external"]), charts.EXTERNAL),
    ]
    return charts.cost_chart(rows, costs["currency"])

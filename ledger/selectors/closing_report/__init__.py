"""Gathering the closing report: every section as plain JSON, in a bounded number of queries.

Runs, metric points and checkpoints are aggregated in SQL, never loaded one by one, so the cost
of a report does not grow with the number of runs or points (bench/report/run.py measures it).
`load_facts` reads; the section modules (plan, money, hours, items, outputs) format. Every hour
figure of the calendar comes from the campaign's one forecast and its timeline
(`estimates.selectors.timeline.campaign_forecast`, docs/domain.md §7a): the headline, the
stages' reserved, observed and current hours, the totals, the Gantt and the `timeline` section
(the API's `GET /campaigns/{id}/timeline/` answer, word for word).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Avg, Count, Max, Q, Sum
from django.utils import timezone

from campaigns.models import (
    Amendment,
    Campaign,
    Checkpoint,
    DecisionPoint,
    MetricSummary,
    PlanBaseline,
    PlannedItem,
    Run,
    RunKind,
    RunSegment,
    RunStatus,
    Stage,
    ThroughputSample,
)
from estimates.domain.forecast_inputs import Forecast
from estimates.selectors.next_plan import campaign_lessons
from estimates.selectors.timeline import campaign_forecast, campaign_timeline_json
from ledger.charts.report_charts import gantt_section
from ledger.domain.report_hours import hours_section, next_campaign
from ledger.models import Deliverable, LedgerEntry
from ledger.selectors.closing_report.common import REPORT_SCHEMA, moment
from ledger.selectors.closing_report.items import (
    item_fates,
    items_section,
    pilots_section,
    runs_section,
    segments_section,
)
from ledger.selectors.closing_report.money import cost_per_accepted, costs_section
from ledger.selectors.closing_report.outputs import (
    checkpoints_section,
    deliverables_section,
    reload_instructions,
)
from ledger.selectors.closing_report.plan import changes, lot_hours, plan_section
from ledger.selectors.quality_per_dollar import value_for_money
from ledger.selectors.spend import spend_over_time

# Rows of `.values()`: dicts keyed by the field names asked for.
Rows = list[Any]


@dataclass(frozen=True)
class Facts:
    """What the report reads from the database, once each."""

    baseline: PlanBaseline | None
    snapshot: dict[str, Any]
    items: list[PlannedItem]
    # Each stage's deviation note, by stage id (the timeline carries the hours, not the words).
    notes: dict[int, str]
    entries: Rows
    decisions: list[DecisionPoint]
    amendments: list[Amendment]
    run_groups: Rows
    ended_runs: Rows
    metrics: Rows
    ended_segments: Rows
    resumed_runs: Rows
    checkpoint_totals: dict[str, Any]
    verified_checkpoints: Rows
    pilot_samples: Rows
    deliverables: list[Deliverable]


def collect(campaign: Campaign) -> dict[str, Any]:
    """Everything the closing report says, as plain JSON, in a bounded number of queries."""
    f = load_facts(campaign)
    items_by_id = {i.pk: i for i in f.items}
    forecast = campaign_forecast(campaign)
    hours = hours_section(forecast.timeline, f.notes)
    fates = item_fates(f.items, f.run_groups, forecast.timeline, f.deliverables)
    costs, summary = costs_section(campaign, f.snapshot, f.entries, f.deliverables)
    return {
        "schema": REPORT_SCHEMA,
        "generated_at": moment(timezone.now()),
        "campaign": _campaign_header(campaign, f.baseline),
        # The forecast's headline: the calendar against the window, as every surface says it.
        "headline": forecast.headline,
        "plan": plan_section(f.snapshot, f.baseline is not None, hours, lot_hours(campaign)),
        # The plan's hour figures as the campaign page and the API state them (§8.5).
        "plan_figures": _plan_figures(forecast),
        "costs": costs,
        "cost_per_accepted": cost_per_accepted(campaign, summary),
        # Spend over time to the close (or now): docs/domain.md §18.4.
        "spend": spend_over_time(campaign, campaign.closed_at),
        # Each item's best metric against its cost to the close: docs/domain.md §18.6.
        "value_for_money": value_for_money(campaign, campaign.closed_at),
        "hours": hours,
        # The committed calendar as the Gantt draws it (campaigns/charts/gantt.py).
        "gantt": gantt_section(forecast.timeline),
        "decisions": [_decision(d) for d in f.decisions],
        "amendments": [_amendment(a) for a in f.amendments],
        "items": items_section(f.items, f.decisions, f.run_groups, f.ended_runs, fates),
        "pilots": pilots_section(f.items, f.pilot_samples, _item_forecasts(forecast)),
        "runs": runs_section(f.run_groups, f.ended_runs, f.metrics, items_by_id),
        # Resumed runs, per segment: hours and the entry each stretch posted (§4).
        "run_segments": segments_section(f.ended_segments, f.resumed_runs, f.entries),
        "deliverables": deliverables_section(f.deliverables),
        "checkpoints": checkpoints_section(
            campaign, f.items, f.run_groups, f.checkpoint_totals, f.verified_checkpoints, fates
        ),
        "reload_instructions": reload_instructions(
            campaign, f.deliverables, f.verified_checkpoints
        ),
        "next_campaign": next_campaign(campaign_lessons(campaign, forecast.timeline), hours),
        # The timeline as the API answers it (GET /campaigns/{id}/timeline/), from the same
        # forecast as every figure above.
        "timeline": campaign_timeline_json(campaign, forecast),
        "currency": campaign.currency,
    }


def _plan_figures(forecast: Forecast) -> dict[str, Any]:
    figures = forecast.timeline.figures
    return {**figures.as_json(), "lines": [list(line) for line in figures.lines()]}


def _item_forecasts(forecast: Forecast) -> dict[int, dict[str, Any]]:
    """Each item's forecast as the timeline scales its stages by (the same forecast)."""
    return {
        f.id: {
            "time_source": f.time_source,
            "forecast_hours": round(f.forecast_hours, 2),
            "note": f.note,
        }
        for f in forecast.items
    }


def _username(user: Any) -> str | None:
    return user.get_username() if user else None


def _campaign_header(campaign: Campaign, baseline: PlanBaseline | None) -> dict[str, Any]:
    return {
        "id": campaign.pk,
        "title": campaign.title,
        "team": campaign.team.name,
        "status": campaign.status,
        "question": campaign.question,
        "decision_threshold": campaign.decision_threshold,
        "corpus": {"name": campaign.corpus_name, "revision": campaign.corpus_revision},
        "expected_deliverables": campaign.expected_deliverables,
        "conclusion": campaign.conclusion or None,
        "committed_at": moment(campaign.committed_at),
        "committed_by": _username(campaign.committed_by),
        "closed_at": moment(campaign.closed_at),
        "closed_by": _username(campaign.closed_by),
        "baseline": (
            {"created_at": moment(baseline.created_at), "digest": baseline.digest}
            if baseline is not None
            else None
        ),
    }


def _decision(d: DecisionPoint) -> dict[str, Any]:
    return {
        "label": d.label,
        "outcome": d.outcome,
        "rationale": d.rationale,
        "decided_by": _username(d.decided_by),
        "decided_at": moment(d.decided_at),
        "cut_items": [i.name for i in d.cut_variants.all()],
    }


def _amendment(a: Amendment) -> dict[str, Any]:
    before, after = a.changes.get("before", {}), a.changes.get("after", {})
    return {
        "item": a.item.name if a.item else None,
        "reason": a.reason,
        "before": before,
        "after": after,
        "changes": changes(before, after),
        "made_by": _username(a.made_by),
        "made_at": moment(a.made_at),
    }


# --- Loading: one query (or one aggregate) per kind of fact ---------------------------------


def load_facts(campaign: Campaign) -> Facts:
    baseline = PlanBaseline.objects.filter(campaign=campaign).first()
    items = list(PlannedItem.objects.filter(campaign=campaign).order_by("id"))
    notes = dict(
        Stage.objects.filter(campaign=campaign)
        .exclude(deviation_note="")
        .values_list("id", "deviation_note")
    )
    entries = _ledger_entries(campaign)
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
    run_groups, ended_runs, metrics = _runs(campaign)
    ended_segments, resumed_runs = _segments(campaign)
    checkpoint_totals, verified = _checkpoints(campaign)
    return Facts(
        baseline=baseline,
        snapshot=baseline.snapshot if baseline is not None else campaign.snapshot(),
        items=items,
        notes=notes,
        entries=entries,
        decisions=decisions,
        amendments=amendments,
        run_groups=run_groups,
        ended_runs=ended_runs,
        metrics=metrics,
        ended_segments=ended_segments,
        resumed_runs=resumed_runs,
        checkpoint_totals=checkpoint_totals,
        verified_checkpoints=verified,
        pilot_samples=_pilot_samples(campaign),
        deliverables=list(
            Deliverable.objects.filter(campaign=campaign)
            .select_related("run")
            .prefetch_related("files")
            .order_by("created_at", "id")
        ),
    )


def _ledger_entries(campaign: Campaign) -> Rows:
    return list(
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
            "run_id",
            "run_segment",
        )
    )


def _segments(campaign: Campaign) -> tuple[Rows, Rows]:
    """The ended segments of the campaign's resumed runs, and those runs, in one query."""
    ended = list(
        RunSegment.objects.filter(run__campaign=campaign)
        .order_by("run__created_at", "run_id", "number")
        .values(
            "run_id",
            "number",
            "started_at",
            "ended_at",
            "status",
            "hours",
            "run__run_id",
            "run__status",
            "run__segment_started_at",
            "run__finished_at",
            "run__observed_hours",
            "run__prior_hours",
        )
    )
    resumed = {
        s["run_id"]: {"id": s["run_id"], **{k[5:]: v for k, v in s.items() if k[:5] == "run__"}}
        for s in ended
    }
    return ended, list(resumed.values())


def _runs(campaign: Campaign) -> tuple[Rows, Rows, Rows]:
    """Runs grouped by item, kind and status; the runs that ended early; metrics by name."""
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
    # The per-(run, metric) summaries, never the points: a row per run and metric however
    # long the runs (docs/metric_store.md §1).
    metrics = list(
        MetricSummary.objects.filter(run__campaign=campaign)
        .order_by()
        .values("name")
        .annotate(points=Sum("count"), runs=Count("run_id"), non_finite=Sum("non_finite"))
        .order_by("name")
    )
    return run_groups, ended_runs, metrics


def _checkpoints(campaign: Campaign) -> tuple[dict[str, Any], Rows]:
    """Checkpoint totals in one aggregate, and the verified checkpoints newest first."""
    totals = Checkpoint.objects.filter(run__campaign=campaign).aggregate(
        total=Count("id"),
        verified=Count("id", filter=Q(resume_verified=True)),
        runs=Count("run_id", distinct=True),
        mean_write=Avg("write_seconds"),
        max_restore=Max("restore_seconds"),
    )
    verified = list(
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
    return totals, verified


def _pilot_samples(campaign: Campaign) -> Rows:
    return list(
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

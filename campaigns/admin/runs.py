"""Runs and plan baselines in the admin, read-only: runs come from training loops through the
API, a baseline is frozen at commit. The run page shows its clock and hours (started, last
heard from, ended, measured and counted hours, and any person's correction of them), why it
stopped, its curves, its checkpoints and its measured throughput; the tables are templates under
templates/admin/campaigns/run/."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.urls import path
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe

from campaigns.admin import run_artifacts
from campaigns.admin.run_stop import stop_button, stop_view
from campaigns.admin.run_table import table_view
from campaigns.admin.tenancy import TeamScopedAdmin
from campaigns.charts import interactive
from campaigns.charts.curves import curve_svg
from campaigns.domain import run_hours
from campaigns.models import PlanBaseline, Run
from campaigns.selectors import run_metrics

# The run page draws at most this many metrics, each downsampled to this many points.
CURVES_SHOWN = 8
POINTS_PER_CURVE = 600
# System metrics (MLflow's and the client's NVML sampler's ``system/…``) are drawn apart,
# utilisation, memory and power of up to four GPUs first.
SYSTEM = "system/"
SYSTEM_SHOWN = 12


@admin.register(PlanBaseline)
class PlanBaselineAdmin(TeamScopedAdmin):
    team_path = "campaign__team"
    list_display = ["campaign", "created_at"]
    readonly_fields = ["campaign", "snapshot", "created_at"]

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


def _render(template: str, context: dict[str, Any]) -> str:
    # render_to_string escapes every value; strip() drops the file's trailing newline and
    # returns a plain str, so the result is marked safe again.
    return mark_safe(render_to_string(f"admin/campaigns/run/{template}", context).strip())


@admin.register(Run)
class RunAdmin(TeamScopedAdmin):
    class Media:
        # uPlot and the project's chart module, served from static files (README: charts).
        css = {"all": ("campaigns/vendor/uplot/uPlot.min.css", "campaigns/charts.css")}
        js = ("campaigns/vendor/uplot/uPlot.iife.min.js", "campaigns/charts.js")

    # The list is the runs table (changelist_view); search serves the admin's lookups.
    list_display = ["run_id", "run_name", "campaign", "variant", "kind", "status"]
    search_fields = ["run_id", "run_name", "campaign__title"]
    readonly_fields = [
        "team",
        "campaign",
        "run_id",
        "variant",
        "kind",
        "config",
        "config_digest",
        "status",
        "stop_rule",
        "stop_reason",
        "stop_step",
        "stopped_at",
        "observed_hours",
        "observed_reason",
        "measured_hours",
        "hours_source",
        "last_step",
        "created_at",
        "started_at",
        "heartbeat_at",
        "ended_at",
        "finished_at",
        "correction_table",
        "gpus_shown",
        "clock",
        "stop",
        "curves",
        "system_curves",
        "artifact_tree",
        "checkpoint_table",
        "throughput_table",
    ]
    fieldsets = [
        (
            None,
            {
                "fields": [
                    ("run_id", "run_name", "campaign", "team"),
                    ("variant", "kind", "status"),
                    ("last_step", "gpus_shown"),
                    ("created_at", "finished_at"),
                ]
            },
        ),
        (
            "Hours",
            {
                "description": "Measured by the run's own clock: its start to its end, earlier "
                "segments added; a run gone silent ends at its last heartbeat. A planner corrects "
                "them with a reason (POST /api/v1/runs/{run_id}/observed/).",
                "fields": [
                    "clock",
                    ("measured_hours", "observed_hours", "hours_source"),
                    "observed_reason",
                    "correction_table",
                ],
            },
        ),
        ("Stop", {"fields": ["stop"]}),
        ("Segments and datasets", {"fields": ["segment_table", "mlflow_inputs"]}),
        ("Curves", {"fields": ["curves"]}),
        ("System metrics (GPUs)", {"fields": ["system_curves"]}),
        ("Artifacts", {"fields": ["artifact_tree"]}),
        ("Checkpoints", {"fields": ["checkpoint_table"]}),
        ("Throughput", {"fields": ["throughput_table"]}),
        ("Configuration", {"fields": ["config", "config_digest"], "classes": ["collapse"]}),
    ]

    def get_urls(self) -> list[Any]:
        return [
            path(
                "<path:object_id>/stop/",
                self.admin_site.admin_view(self.stop_run_view),
                name="campaigns_run_stop",
            ),
            *[
                path(
                    f"<path:object_id>/artifacts/<int:artifact_id>/{action}/",
                    self.admin_site.admin_view(getattr(run_artifacts, f"{action}_view")),
                    {"model_admin": self},
                    name=f"campaigns_run_artifact_{action}",
                )
                for action in ("preview", "download", "image")
            ],
            *super().get_urls(),
        ]

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        """The runs table (campaigns/admin/run_table.py) instead of Django's list."""
        if not self.has_view_or_change_permission(request):
            return super().changelist_view(request, extra_context)
        return table_view(self, request)

    def stop_run_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        return stop_view(self, request, object_id)

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        run = self.get_object(request, object_id)
        extra = {**(extra_context or {})}
        if run is not None:
            extra["stop_button"] = stop_button(run, request)
        return super().change_view(request, object_id, form_url, extra)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        # The run page shows its segments.
        return super().get_queryset(request).prefetch_related("segments")

    @admin.display(description="Stop")
    def stop(self, run: Run) -> str:
        if run.status != "stopped":
            return f"not stopped ({run.get_status_display().lower()})"
        rule = run.stop_rule.get_kind_display() if run.stop_rule is not None else "by hand"
        at = run.stopped_at.strftime("%Y-%m-%d %H:%M %Z") if run.stopped_at else "time unknown"
        return _render("stop.html", {"rule": rule, "at": at, "run": run})

    @admin.display(description="Segments (a resumed run)")
    def segment_table(self, run: Run) -> str:
        """Each ended stretch of a resumed run with its own hours (docs/mlflow.md)."""
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            ((s.number, s.started_at, s.ended_at, s.status, s.hours) for s in run.segments.all()),
        )
        if not rows:
            return "one segment (never resumed)"
        head = "<table><tr><th>#</th><th>from</th><th>to</th><th>ended</th><th>hours</th></tr>"
        return format_html("{}{}</table>", mark_safe(head), rows)

    @admin.display(description="Clock")
    def clock(self, run: Run) -> str:
        def moment(at: Any) -> str:
            return "–" if at is None else at.strftime("%Y-%m-%d %H:%M:%S %Z")

        ended = moment(run.ended_at) if run.ended_at else "not yet"
        if run.ended_silent:
            ended += " (it went silent: its last heartbeat)"
        return format_html(
            "started {} · last heard from {} · ended {}",
            moment(run.started_at),
            moment(run.heartbeat_at),
            ended,
        )

    @admin.display(description="GPUs")
    def gpus_shown(self, run: Run) -> int:
        return run.gpus

    @admin.display(description="Hours from")
    def hours_source(self, run: Run) -> str:
        found = run_hours.source(
            observed_hours=run.observed_hours,
            measured=run.measured_hours,
            reason=run.observed_reason,
        )
        return {
            "measured": "the run's own clock",
            "stated": "the hours its finish stated",
            "corrected": "a person's correction",
        }.get(found or "", "not ended yet")

    @admin.display(description="Corrections of its hours")
    def correction_table(self, run: Run) -> str:
        """Before, after, who, when and why (POST /api/v1/runs/{run_id}/observed/)."""
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            (
                (
                    c.made_at.strftime("%Y-%m-%d %H:%M %Z"),
                    c.made_by.get_username() if c.made_by else "–",
                    "–" if c.before is None else c.before,
                    c.after,
                    c.reason,
                )
                for c in run.hours_corrections.select_related("made_by")
            ),
        )
        if not rows:
            return "none: its hours are as it recorded them"
        head = "<table><tr><th>when</th><th>who</th><th>before</th><th>after</th><th>why</th></tr>"
        return format_html("{}{}</table>", mark_safe(head), rows)

    @admin.display(description="Dataset inputs (MLflow)")
    def mlflow_inputs(self, run: Run) -> str:
        datasets = [(i.get("dataset") or {}) for i in run.inputs]
        rows = format_html_join(
            "",
            "<li><code>{}</code> digest {} ({})</li>",
            ((d.get("name", ""), d.get("digest", ""), d.get("source_type", "")) for d in datasets),
        )
        return format_html("<ul>{}</ul>", rows) if rows else "none logged"

    @admin.display(description="Curves")
    def curves(self, run: Run) -> str:
        """Each metric downsampled (campaigns/domain/downsampling.py) and drawn
        (campaigns/charts/curves.py, which escapes what it draws)."""
        names = [(n, c) for n, c in run_metrics.metric_names(run) if not n.startswith(SYSTEM)]
        if not names:
            return "no metrics logged"
        return self._drawn(run, [name for name, _count in names[:CURVES_SHOWN]], "curve")

    @admin.display(description="System metrics")
    def system_curves(self, run: Run) -> str:
        """GPU utilisation, memory and power (and MLflow's CPU and disk figures), each drawn as
        the curves are; the GPUs' first."""
        names = [n for n, _c in run_metrics.metric_names(run) if n.startswith(SYSTEM)]
        if not names:
            return "no system metrics logged (the client's nvml extra or MLflow's system metrics)"
        names.sort(key=lambda n: (not n.startswith(f"{SYSTEM}gpu_"), n))
        return self._drawn(run, names[:SYSTEM_SHOWN], "system")

    def _drawn(self, run: Run, shown: list[str], prefix: str) -> str:
        stop_step = run.stop_step if run.status == "stopped" else None
        # Every curve in a few queries, not three per curve (issue 21).
        by_name = run_metrics.run_series(run, shown, POINTS_PER_CURVE)
        drawings = []
        for i, name in enumerate(shown):
            found = by_name[name]
            svg = curve_svg(name, found.points, count=found.count, stop_step=stop_step)
            drawings.append(
                {
                    "svg": mark_safe(svg),
                    "id": f"{prefix}-data-{i}",
                    "data": interactive.single(name, found.points, stop_step=stop_step),
                }
            )
        return _render("curves.html", {"drawings": drawings})

    @admin.display(description="Artifacts")
    def artifact_tree(self, run: Run) -> str:
        return run_artifacts.artifacts_html(run)

    @admin.display(description="Checkpoints")
    def checkpoint_table(self, run: Run) -> str:
        rows = [
            {
                "step": c.step,
                "components": ", ".join(str(x) for x in c.components) or "–",
                "size": _size(c.size_bytes),
                "write": _seconds(c.write_seconds),
                "restore": _seconds(c.restore_seconds),
                "location": c.location or "–",
                "verified": "yes" if c.resume_verified else "no",
            }
            for c in run.checkpoints.order_by("step", "id")
        ]
        if not rows:
            return "no checkpoints"
        return _render("checkpoints.html", {"rows": rows})

    @admin.display(description="Throughput")
    def throughput_table(self, run: Run) -> str:
        rows = [
            {
                "at": t.created_at.strftime("%Y-%m-%d %H:%M %Z"),
                "tokens": _rate(t.tokens_per_second),
                "samples": _rate(t.samples_per_second),
                "gpus": t.gpus,
                "measured": _seconds(t.measured_seconds),
            }
            for t in run.throughputs.all()
        ]
        if not rows:
            return "no throughput measured"
        return _render("throughput.html", {"rows": rows})

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return False  # runs come from training loops, through the API

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


def _size(size: int | None) -> str:
    if size is None:
        return "–"
    value = float(size)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if value < 1000 or unit == "TB":
            return f"{value:.3g} {unit}"
        value /= 1000
    return f"{size} B"


def _seconds(value: float | None) -> str:
    return "–" if value is None else f"{value:.3g}"


def _rate(value: float | None) -> str:
    return "–" if value is None else f"{value:,.0f}"

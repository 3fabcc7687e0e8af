"""The closing report's Gantt (ledger/charts/report_charts.py gantt_section,
ledger/rendering/closing_report.py gantt_of): drawn to scale
from the campaign's timeline, cut items' stages marked cut, observed hours overlaid, stored in
the report's JSON so that every rendering draws the same chart. Pure: no database."""

from __future__ import annotations

import json
from decimal import Decimal as D

from campaigns.domain.observed_hours import RunRow
from campaigns.domain.timeline import ItemPlan, LotPlan, StagePlan, TimelineInputs, build
from ledger.charts.report_charts import gantt_section
from ledger.rendering.closing_report import gantt_of


def test_the_reports_gantt_marks_cut_stages_and_overlays_observed_hours() -> None:
    stages = (
        StagePlan(
            id=1,
            name="train rank 8",
            kind="training",
            machine=True,
            resource="gpu-a",
            planned_hours=D(20),
            variant_id=8,
        ),
        StagePlan(
            id=2,
            name="train rank 32",
            kind="training",
            machine=True,
            resource="gpu-b",
            planned_hours=D(12),
            variant_id=32,
        ),
    )
    items = (
        ItemPlan(id=8, name="rank 8", planned_hours=D(20)),
        ItemPlan(id=32, name="rank 32", planned_hours=D(12), status="cut"),
    )
    timeline = build(
        TimelineInputs(
            window_hours=D(72),
            stages=stages,
            items=items,
            runs=(
                RunRow(8, "full", "completed", D("21.5")),
                RunRow(32, "full", "stopped", D("0.25")),
            ),
            lots=(LotPlan(label="RTX 4090 week", hours=168.0),),
            committed_stages=stages,
            committed_items=items,
        )
    )
    # Through the stored JSON, as a report read back from the database is rendered.
    data = json.loads(json.dumps({"gantt": gantt_section(timeline)}))
    svg = gantt_of(data)
    assert svg.count('class="stage cut"') == 1
    # The done stage where it ran (21.5 h observed), beside where the plan put it (20 h).
    assert "train rank 8: 0–21.5 h, done; planned 0–20 h" in svg
    assert svg.count('class="committed"') == 2
    assert "168 h" in svg  # the lot sets the axis' end


def test_a_report_stored_before_the_gantt_section_draws_none() -> None:
    assert gantt_of({"hours": {"stages": []}}) == ""

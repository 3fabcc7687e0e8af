"""The calendar Gantt drawing (campaigns/charts/gantt.py), without a database."""

from __future__ import annotations

import re

from campaigns.charts.gantt import GanttLot, GanttStage, gantt_svg

STAGES = [
    GanttStage("setup", "gpu-a", 0, 2, critical=True),
    GanttStage("train", "gpu-a", 2, 10, critical=True),
    GanttStage("eval", "gpu-b", 2, 4),
    GanttStage("review", None, 10, 11),
]


def widths(svg: str, cls: str) -> list[float]:
    return [
        float(w)
        for w in re.findall(rf'class="{cls}[^"]*" x="[^"]+" y="[^"]+" width="([^"]+)"', svg)
    ]


def test_each_stage_is_a_rect_in_one_lane_per_resource_plus_people() -> None:
    svg = gantt_svg(STAGES, 72, [GanttLot("RTX 4090, 3 days", 72)])
    assert svg.count('class="stage') == 4
    assert ">gpu-a<" in svg and ">gpu-b<" in svg and ">people<" in svg
    assert svg.count('class="stage critical"') == 2
    assert 'class="lot"' in svg


def test_ten_hours_of_work_fill_most_of_the_width_even_in_a_long_window() -> None:
    svg = gantt_svg(STAGES, 168)
    total = sum(widths(svg, "stage")[:2])  # setup + train: 0 to 10 h of an 11 h plan
    assert total > 0.8 * (880 - 130) * 10 / 11 / 1.1
    assert "window at 168 h" in svg
    assert "slack 157 h" in svg


def test_a_window_inside_the_span_is_a_rule_labelled_window() -> None:
    svg = gantt_svg(STAGES, 10.5)
    assert 'class="window"' in svg and "window 10.5 h" in svg

"""The calendar Gantt drawing (campaigns/charts/gantt.py), without a database."""

from __future__ import annotations

import re

from campaigns.charts.gantt import LABEL, RIGHT, WIDTH, GanttLot, GanttStage, gantt_svg

STAGES = [
    GanttStage("setup", "gpu-a", 0, 2, critical=True),
    GanttStage("train", "gpu-a", 2, 10, critical=True),
    GanttStage("eval", "gpu-b", 2, 4),
    GanttStage("review", None, 10, 11),
]
PLOT = WIDTH - LABEL - RIGHT


def rects(svg: str, cls: str) -> list[tuple[float, float]]:
    """(x, width) of every rect whose class starts with `cls`."""
    return [
        (float(x), float(w))
        for x, w in re.findall(rf'class="{cls}[^"]*" x="([^"]+)" y="[^"]+" width="([^"]+)"', svg)
    ]


def window_x(svg: str) -> float:
    return float(re.search(r'class="window" x1="([^"]+)"', svg).group(1))


def test_each_stage_is_a_rect_in_one_lane_per_resource_plus_people() -> None:
    svg = gantt_svg(STAGES, 72, [GanttLot("RTX 4090, 3 days", 72)])
    assert svg.count('class="stage') == 4
    assert ">gpu-a<" in svg and ">gpu-b<" in svg and ">people<" in svg
    assert svg.count('class="stage critical"') == 2
    assert 'class="lot"' in svg


def test_the_window_sets_the_scale_so_slack_is_drawn_to_its_share_of_the_window() -> None:
    # 41 h of plan in a 72 h window: the 31 h of slack is 31/72 of the plot.
    stages = [GanttStage("train", "gpu-a", 0, 41, critical=True)]
    svg = gantt_svg(stages, 72)
    assert abs(window_x(svg) - (LABEL + PLOT)) < 0.2
    ((_x, w),) = rects(svg, "slack")
    assert abs(w - PLOT * 31 / 72) < 0.2
    ((_, tw),) = rects(svg, "stage")
    assert abs(tw - PLOT * 41 / 72) < 0.2
    assert "slack 31 h" in svg and "window 72 h" in svg


def test_a_lot_longer_than_the_window_extends_the_axis_and_is_drawn_to_scale() -> None:
    svg = gantt_svg(STAGES, 72, [GanttLot("RTX 4090, 1 week", 168)])
    ((lx, lw),) = rects(svg, "lot")
    assert abs(lx - LABEL) < 0.1 and abs(lw - PLOT) < 0.2  # the lot's end is the axis' end
    assert abs(window_x(svg) - (LABEL + PLOT * 72 / 168)) < 0.2
    train = rects(svg, "stage critical")[1]
    assert abs(train[1] - PLOT * 8 / 168) < 0.2  # the same hours-to-pixels for stages


def test_a_plan_past_the_window_sets_the_scale() -> None:
    svg = gantt_svg(STAGES, 5)
    assert abs(window_x(svg) - (LABEL + PLOT * 5 / 11)) < 0.2
    assert not rects(svg, "slack")


def test_every_stage_is_labelled_in_its_bar_or_by_number_in_the_legend() -> None:
    stages = [
        GanttStage("a-long-stage-name", "gpu-a", 0, 0.5),
        GanttStage("fine-tune rank 16", "gpu-a", 0.5, 60, critical=True),
        GanttStage("x", None, 60, 61),
    ]
    svg = gantt_svg(stages, 168, [GanttLot("lot", 168)])
    labels = re.findall(r'class="label-stage"[^>]*>([^<]+)<', svg)
    assert "fine-tune rank 16" in labels  # fits inside
    legend = re.findall(r'class="legend-number"[^>]*>([^<]+)<', svg)
    assert "1" in labels and any(t.startswith("1 a-long-stage-name") for t in legend)
    named = set(labels) | {t.split(" ", 2)[1] for t in legend}
    assert all(s.key in named for s in stages)


def test_a_cut_stage_is_marked_cut_and_not_drawn_as_planned_work() -> None:
    stages = [*STAGES, GanttStage("rank 32", "gpu-b", 4, 9, cut=True)]
    svg = gantt_svg(stages, 72)
    (cut,) = re.findall(r'<rect class="stage cut"[^>]*>', svg)
    assert 'fill="url(#cut-hatch)"' in cut
    assert "cut (not run)" in svg
    assert "rank 32: 4–9 h (cut: not run)" in svg


def test_observed_hours_are_a_thinner_bar_from_the_planned_start() -> None:
    stages = [
        GanttStage("train", "gpu-a", 0, 10, critical=True, observed_hours=12.5),
        GanttStage("eval", "gpu-a", 10, 12),
    ]
    svg = gantt_svg(stages, 24)
    ((ox, ow),) = rects(svg, "observed")
    assert abs(ox - LABEL) < 0.1 and abs(ow - PLOT * 12.5 / 24) < 0.2
    assert "train: observed 12.5 h of 10 h planned" in svg
    assert "observed hours" in svg  # in the legend


def test_non_finite_and_empty_inputs_draw_without_error() -> None:
    assert 'id="calendar-gantt"' in gantt_svg([], 0)
    svg = gantt_svg(
        [GanttStage("s", "gpu", 0, float("inf"), observed_hours=float("nan"))],
        float("nan"),
        [GanttLot("l", float("inf"))],
    )
    assert not re.search(r'="(nan|inf)', svg)

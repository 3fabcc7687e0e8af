"""The calendar Gantt drawing (campaigns/charts/gantt.py), without a database: the committed
plan beside the calendar as observed and forecast, to scale, from the one timeline."""

from __future__ import annotations

import re
from decimal import Decimal

from campaigns.charts.gantt import LABEL, RIGHT, WIDTH, GanttStage, gantt_of, gantt_svg
from campaigns.domain.timeline import StagePlan, TimelineInputs, build
from campaigns.domain.timeline_lots import LotSpan


def lot(label: str, hours: float, start: float = 0.0) -> LotSpan:
    return LotSpan(label, "RTX-4090", start, start + hours)


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
    svg = gantt_svg(STAGES, 72, [lot("RTX 4090, 3 days", 72)])
    assert svg.count('class="stage') == 4
    assert ">gpu-a<" in svg and ">gpu-b<" in svg and ">people<" in svg
    assert svg.count('critical"') == 2
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
    svg = gantt_svg(STAGES, 72, [lot("RTX 4090, 1 week", 168)])
    ((lx, lw),) = rects(svg, "lot")
    assert abs(lx - LABEL) < 0.1 and abs(lw - PLOT) < 0.2  # the lot's end is the axis' end
    assert abs(window_x(svg) - (LABEL + PLOT * 72 / 168)) < 0.2
    train = rects(svg, "stage planned critical")[1]
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
    svg = gantt_svg(stages, 168, [lot("lot", 168)])
    labels = re.findall(r'class="label-stage"[^>]*>([^<]+)<', svg)
    assert "fine-tune rank 16" in labels  # fits inside
    legend = re.findall(r'class="legend-number"[^>]*>([^<]+)<', svg)
    assert "1" in labels and any(t.startswith("1 a-long-stage-name") for t in legend)
    named = set(labels) | {t.split(" ", 2)[1] for t in legend}
    assert all(s.key in named for s in stages)


def test_a_cut_stage_is_hatched_and_drawn_only_for_what_ran_before_the_cut() -> None:
    stages = [
        *STAGES,
        GanttStage("rank 32", "gpu-b", 4, 6, state="cut", planned_start=4, planned_end=9),
    ]
    svg = gantt_svg(stages, 72)
    (cut,) = re.findall(r'<rect class="stage cut"[^>]*>', svg)
    assert 'fill="url(#cut-hatch)"' in cut
    assert "cut (what ran before the cut)" in svg
    assert "rank 32: 4–6 h, cut (cut: only what ran before the cut); planned 4–9 h" in svg


def test_a_slip_draws_every_later_stage_right_of_its_plan_and_the_overrun_in_red() -> None:
    """The seed: setup and loading take 30 h more; the calendar reaches 78 h of 72."""
    plan = [
        StagePlan(
            id=1,
            name="setup",
            kind="setup",
            machine=True,
            resource="4090",
            planned_hours=Decimal(3),
            typed_hours=Decimal(18),
        ),
        StagePlan(
            id=2,
            name="loading",
            kind="loading",
            machine=True,
            resource="4090",
            planned_hours=Decimal(5),
            typed_hours=Decimal(20),
            depends_on=(1,),
        ),
        StagePlan(
            id=3,
            name="train",
            kind="training",
            machine=True,
            resource="4090",
            planned_hours=Decimal(40),
            depends_on=(2,),
        ),
    ]
    timeline = build(TimelineInputs(window_hours=Decimal(72), stages=tuple(plan), items=()))
    svg = gantt_of(timeline)
    committed = dict(zip(["setup", "loading", "train"], rects(svg, "committed"), strict=True))
    (train,) = rects(svg, "stage planned")
    span = timeline.hours
    assert abs(committed["train"][0] - (LABEL + PLOT * 8 / span)) < 0.2
    assert abs(train[0] - (LABEL + PLOT * 38 / span)) < 0.2
    ((ox, ow),) = rects(svg, "overrun")
    assert abs(ox - (LABEL + PLOT * 72 / span)) < 0.2 and abs(ow - PLOT * 6 / span) < 0.2
    assert "6 h over" in svg
    assert 'aria-label="calendar: 78 h of a 72 h window (planned 48 h)"' in svg
    assert len(rects(svg, "stage done")) == 2


def test_a_lots_end_is_marked_across_the_plot() -> None:
    svg = gantt_svg(STAGES, 72, [lot("RTX 4090, 3 days", 72)])
    (end,) = re.findall(r'class="lot-end" x1="([^"]+)"', svg)
    assert abs(float(end) - (LABEL + PLOT)) < 0.2


def test_non_finite_and_empty_inputs_draw_without_error() -> None:
    assert 'id="calendar-gantt"' in gantt_svg([], 0)
    svg = gantt_svg(
        [GanttStage("s", "gpu", 0, float("inf"), planned_start=0, planned_end=float("nan"))],
        float("nan"),
        [lot("l", float("inf"))],
    )
    assert not re.search(r'="(nan|inf)', svg)


def test_the_charts_stages_come_from_the_timeline_where_the_committed_plan_put_them() -> None:
    from decimal import Decimal as D

    from campaigns.charts.gantt import stages_from_timeline
    from campaigns.domain.timeline import ItemPlan, StagePlan, TimelineInputs, build

    setup = StagePlan(
        id=1, name="Setup", kind="setup", machine=True, resource="4090", planned_hours=D(2)
    )
    train = StagePlan(
        id=2,
        name="Train",
        kind="training",
        machine=True,
        resource="4090",
        planned_hours=D(10),
        variant_id=7,
        depends_on=(1,),
    )
    review = StagePlan(id=3, name="Review", kind="analysis", machine=False, planned_hours=D(1))
    items = (ItemPlan(id=7, name="B", planned_hours=D(10), status="cut"),)
    timeline = build(
        TimelineInputs(
            window_hours=D(72),
            stages=(StagePlan(**{**setup.__dict__, "typed_hours": D(12)}), train, review),
            items=items,
            committed_stages=(setup, train, review),
            committed_items=items,
        )
    )
    drawn = {s.key: s for s in stages_from_timeline(timeline)}
    # The bar where the stage ran (12 h observed), the outline where the committed plan put it.
    assert (drawn["Setup"].start_hours, drawn["Setup"].end_hours) == (0, 12)
    assert (drawn["Setup"].planned_start, drawn["Setup"].planned_end) == (0, 2)
    assert drawn["Setup"].state == "done" and drawn["Setup"].critical
    assert (drawn["Train"].planned_start, drawn["Train"].cut) == (2, True)
    assert drawn["Review"].resource is None
    svg = gantt_svg(list(drawn.values()), 72)
    assert svg.count('class="stage cut"') == 1
    assert "Setup: 0–12 h, done; planned 0–2 h (critical path)" in svg

"""The closing report's Gantt (ledger/reports/render.py gantt_of): drawn to scale from the
report's rows, cut items' stages marked cut, observed hours overlaid."""

from __future__ import annotations

from ledger.reports.render import gantt_of


def test_the_reports_gantt_marks_cut_stages_and_overlays_observed_hours() -> None:
    data = {
        "hours": {
            "totals": {"window_hours": "72"},
            "stages": [
                {
                    "name": "train rank 8",
                    "resource": "gpu-a",
                    "machine": True,
                    "planned_start": "0",
                    "planned_end": "20",
                    "critical": True,
                    "variant": "rank 8",
                    "observed_hours": "21.5",
                },
                {
                    "name": "train rank 32",
                    "resource": "gpu-b",
                    "machine": True,
                    "planned_start": "0",
                    "planned_end": "12",
                    "variant": "rank 32",
                    "observed_hours": "0.25",
                },
            ],
        },
        "items": {"tiers": [{"tier": "optional", "items": [{"name": "rank 32", "fate": "cut"}]}]},
        "plan": {"lots": [{"plan": "RTX 4090 week", "duration_hours": "168", "quantity": 1}]},
    }
    svg = gantt_of(data)
    assert svg.count('class="stage cut"') == 1
    assert svg.count('class="observed"') == 2
    assert "train rank 8: observed 21.5 h of 20 h planned" in svg
    assert "168 h" in svg  # the lot sets the axis' end

"""The seed's campaign played through the public API to its close (issue 30), for the report,
fate and clone tests: a baseline and two LoRA variants on a fixed corpus, a data check and a
resume check, 48 h of stages in a 72 h window on one RTX 4090 (docs/domain.md §7.4), the 3-day
lot reserved.

What happens, by hand: setup took 12 h of its 2 (×6.00), loading 10 h of 2 (×5.00); each
pilot ran 1.5 h on the campaign-wide Pilot stage (3 h of 3); the baseline and variant A each
trained 20.9 h of 10 (×2.09 for training); variant B ran 0.5 h, failed, and was cut; every
other stage took its planned hours, typed: the data check's and the resume check's stages
among them, with no full run of those items. The calendar as it ran: 12 + 10 + 1 + 3 + 20.9
+ 20.9 + 0.5 (what B ran before the cut) + 3 + 3 + 1 + 2 + 1 = 78.3 h; observed the same,
each hour once.
"""

from __future__ import annotations

from typing import Any

from rest_framework.test import APIClient

from campaigns.models import Campaign
from catalog.models import RentalPlan

STAGES: list[tuple[str, str, str, str | None, str | None]] = [
    # name, kind, planned hours, item, what was observed (typed; None: its runs say it)
    ("Install environment", "setup", "2", None, "12"),
    ("Load corpus", "loading", "2", None, "10"),
    ("Check the data", "validation", "1", "Data check", "1"),
    ("Pilot", "pilot", "3", None, None),
    ("Train baseline", "training", "10", "Baseline", None),
    ("Train variant A", "training", "10", "Variant A", None),
    ("Train variant B", "training", "10", "Variant B", None),
    ("Validate", "validation", "3", None, "3"),
    ("Predict on the test split", "inference", "3", None, "3"),
    ("Write outputs", "outputs", "1", None, "1"),
    ("Checkpoint write and restore", "checkpoint_io", "2", "Resume check", "2"),
    ("Retrieve results", "retrieval", "1", None, "1"),
]
ITEMS = [
    ("Baseline", "baseline", "mandatory", "10"),
    ("Variant A", "variant", "mandatory", "10"),
    ("Variant B", "variant", "useful", "10"),
    ("Data check", "data_check", "mandatory", "1"),
    ("Resume check", "resume_check", "mandatory", "2"),
]
CALENDAR_HOURS = "78.30"
NOTES = {"Install environment": "the CUDA driver", "Load corpus": "a slow bucket"}


class Refused(AssertionError):
    """The API answered another status than the scenario expects."""


def call(api: APIClient, path: str, body: dict[str, Any], expect: int = 201) -> Any:
    answer = api.post(f"/api/v1/{path}", body, format="json")
    if answer.status_code != expect:
        raise Refused(f"POST {path}: {answer.status_code} {answer.content[:400]!r}")
    return answer.json()


def _plan(api: APIClient) -> tuple[int, dict[str, int], dict[str, int]]:
    cid = call(
        api,
        "campaigns/",
        {
            "title": "Baseline vs two LoRA variants",
            "question": "Does a LoRA variant beat the baseline by 1 F1?",
            "corpus": {"name": "tickets", "revision": "abc123"},
            "window_hours": "72",
            "budget": "110.00",
            "currency": "USD",
        },
    )["id"]
    items = {
        name: call(
            api,
            f"campaigns/{cid}/variants/",
            {"name": name, "role": role, "tier": tier, "planned_hours": hours, "gpu": "RTX-4090"},
        )["id"]
        for name, role, tier, hours in ITEMS
    }
    call(api, f"campaigns/{cid}/stop-rules/", {"kind": "non_finite_loss", "metric": "loss"})
    stages: dict[str, int] = {}
    previous: list[int] = []
    for name, kind, hours, item, _ in STAGES:
        body: dict[str, Any] = {
            "name": name,
            "kind": kind,
            "machine": True,
            "resource": "rtx4090-a",
            "planned_hours": hours,
            "depends_on": previous,
        }
        if item is not None:
            body["variant"] = items[item]
        stages[name] = call(api, f"campaigns/{cid}/stages/", body)["id"]
        previous = [stages[name]]
    plan = RentalPlan.objects.get(provider="IteraGPU", name="RTX 4090, 3 days")
    Campaign.objects.get(pk=cid).lots.create(plan=plan, quantity=1)
    call(api, f"campaigns/{cid}/commit/", {}, expect=200)
    return cid, items, stages


def _run(api: APIClient, cid: int, run_id: str, item: int, kind: str, status: str, hours: str):  # type: ignore[no-untyped-def]
    call(api, f"campaigns/{cid}/runs/", {"run_id": run_id, "variant": item, "kind": kind})
    call(api, f"runs/{run_id}/finish/", {"status": status, "observed_hours": hours}, expect=200)


def seed_campaign(api: APIClient, *, close: bool = True) -> dict[str, Any]:
    """The scenario above, played through the API; returns the ids."""
    cid, items, stages = _plan(api)
    _run(api, cid, "pilot-base", items["Baseline"], "pilot", "completed", "1.5")
    _run(api, cid, "pilot-a", items["Variant A"], "pilot", "completed", "1.5")
    _run(api, cid, "base-1", items["Baseline"], "full", "completed", "20.9")
    _run(api, cid, "a-1", items["Variant A"], "full", "completed", "20.9")
    _run(api, cid, "b-1", items["Variant B"], "full", "failed", "0.5")
    call(
        api,
        f"campaigns/{cid}/decisions/",
        {
            "outcome": "cut",
            "rationale": "A answers the question; B would not change it",
            "cut_variants": [items["Variant B"]],
        },
    )
    for name, _kind, _hours, _item, typed in STAGES:
        if typed is not None:
            call(
                api,
                f"campaigns/{cid}/stages/{stages[name]}/observed/",
                {"observed_hours": typed, "deviation_note": NOTES.get(name, "")},
                expect=200,
            )
    if close:
        call(api, f"campaigns/{cid}/close/", {"conclusion": "Variant A wins by 1.4 F1."}, 200)
    return {"id": cid, "items": items, "stages": stages}

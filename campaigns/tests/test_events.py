"""The named-event registry (campaigns/events.py): subscribers hear what a service emits, once
each, and a name nobody declared is refused rather than silently lost."""

from __future__ import annotations

from typing import Any

import pytest

from campaigns import events


def test_a_subscriber_hears_the_payload_and_subscribing_twice_keeps_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Only this test's handler (the estimates' own would need a database).
    monkeypatch.setitem(events._handlers, events.PLAN_ROW_REMOVED, [])
    heard: list[dict[str, Any]] = []

    def handler(**payload: Any) -> None:
        heard.append(payload)

    events.subscribe(events.PLAN_ROW_REMOVED, handler)
    events.subscribe(events.PLAN_ROW_REMOVED, handler)
    events.emit(events.PLAN_ROW_REMOVED, campaign_id=-1)
    assert heard == [{"campaign_id": -1}]


def test_an_undeclared_name_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown event 'plan_chanegd'"):
        events.emit("plan_chanegd", campaign_id=1)
    with pytest.raises(ValueError, match="unknown event"):
        events.subscribe("plan_chanegd", lambda **payload: None)

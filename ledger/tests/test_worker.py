"""The closing report built by a real Celery worker on Redis, against the test database."""

from __future__ import annotations

import json
from typing import Any

import pytest

from campaigns.models import Team
from campaigns.tests.factories import as_user, committed_campaign, deliverable_body, make_user
from conftest import wait_for
from ledger.models import Report
from ledger.tasks import build_closing_report


@pytest.mark.celery_worker
def test_it_builds_the_requested_report_on_a_worker_and_serves_it(celery_worker: Any) -> None:
    team = Team.objects.create(name="nlp")
    planner = make_user("pia", team=team)
    campaign = committed_campaign(team)
    api = as_user(planner)
    delivered = api.post(
        f"/api/v1/campaigns/{campaign.pk}/deliverables/", deliverable_body(), format="json"
    )
    assert delivered.status_code == 201

    answer = api.post(f"/api/v1/campaigns/{campaign.pk}/reports/", {}, format="json")
    assert answer.status_code == 202
    # Not eager: the request only enqueued the build.
    assert answer.json()["status"] in {"pending", "running", "ready"}
    rid = answer.json()["id"]

    ready = wait_for(
        lambda: Report.objects.filter(pk=rid, status__in=["ready", "failed"]).first(), timeout=60
    )
    assert ready.status == "ready", ready.error
    status = api.get(f"/api/v1/reports/{rid}/").json()
    data = json.loads(api.get(status["links"]["json"]).content)
    assert data["cost_per_accepted"]["cost_per_accepted"] == "47.14"
    assert data["campaign"]["id"] == campaign.pk

    # A second delivery of the message (acks_late) leaves the ready report as it was. The
    # worker runs one task at a time in queue order, so once a report requested after the
    # duplicate is ready, the duplicate has run.
    finished_at = ready.finished_at
    build_closing_report.delay(rid)
    later = api.post(f"/api/v1/campaigns/{campaign.pk}/reports/", {}, format="json").json()["id"]
    wait_for(lambda: Report.objects.filter(pk=later, status="ready").exists(), timeout=60)
    again = Report.objects.get(pk=rid)
    assert (again.status, again.finished_at) == ("ready", finished_at)
    assert Report.objects.count() == 2

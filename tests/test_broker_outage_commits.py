"""Nothing committed behind an error (issue 32, item 4): with Redis unreachable (the broker and
the cache pointed at a closed port), gunicorn as docker-compose runs it on PostgreSQL answered
503 to a campaign create, a report request and the admin's "Generate closing report", each of
whose rows was already committed (the enqueue after commit raised; one on-commit callback had
no `__qualname__`, so Django's error logging raised in turn). Now each answers its success,
and the pending report is picked up by the sweep once the broker is back (docs/domain.md §28)."""

from __future__ import annotations

import http.client
import json
import re
import urllib.parse
from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings
from django.test import Client, override_settings
from django.utils import timezone

from campaigns.models import Campaign, Team
from campaigns.services.keys import issue_api_token
from campaigns.tests.factories import committed_campaign, make_user
from config.celery import app
from conftest import _database_url_for_worker
from ledger.models import Report, ReportStatus
from ledger.tasks import sweep_stale_reports
from tests.live_gunicorn import compose_gunicorn, free_port


def _call(port: int, method: str, path: str, body: Any = None, **headers: str) -> Any:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request(method, path, body, headers)
        answer = conn.getresponse()
        return answer.status, answer.read().decode(), answer.getheader("Set-Cookie") or ""
    finally:
        conn.close()


def _api(port: int, token: str, path: str, body: dict[str, Any] | None) -> tuple[int, str]:
    status, text, _ = _call(
        port, "POST", path, json.dumps(body or {}),
        Authorization=f"Token {token}", **{"Content-Type": "application/json"},
    )  # fmt: skip
    return status, text


def _admin_generate_report(port: int, session: str, campaign: Campaign) -> int:
    changelist = "/admin/campaigns/campaign/"
    status, page, cookie = _call(port, "GET", changelist, Cookie=f"sessionid={session}")
    assert status == 200, page[:300]
    csrf_cookie = re.search(r"csrftoken=([^;]+)", cookie)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert csrf_cookie and token
    form = {
        "csrfmiddlewaretoken": token.group(1),
        "action": "generate_closing_report",
        "_selected_action": str(campaign.pk),
    }
    status, _text, _ = _call(
        port, "POST", changelist, urllib.parse.urlencode(form),
        Cookie=f"sessionid={session}; csrftoken={csrf_cookie.group(1)}",
        **{"Content-Type": "application/x-www-form-urlencoded"},
    )  # fmt: skip
    return int(status)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_writes_that_committed_answer_success_while_the_broker_is_unreachable() -> None:
    team = Team.objects.create(name="nlp")
    owner = make_user("olga", team=team, role="owner")
    campaign = committed_campaign(team, owner)
    token = issue_api_token(owner=owner)[1]
    browser = Client()
    browser.force_login(owner)
    session = browser.cookies["sessionid"].value
    closed = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    env = {
        "CELERY_BROKER_URL": closed,
        "REDIS_URL": closed,
        "CELERY_TASK_ALWAYS_EAGER": "0",
        "SECRET_KEY": settings.SECRET_KEY,  # the test's session cookie signs in there too
        "DEBUG": "1",  # the admin's pages from the static sources (no collectstatic here)
    }
    body = {"title": "During the outage", "question": "q", "corpus": {"name": "c", "revision": "r"}}
    with compose_gunicorn(_database_url_for_worker(), "test-broker-outage.log", env) as port:
        created, text = _api(port, token, "/api/v1/campaigns/", body)
        requested, report_text = _api(port, token, f"/api/v1/campaigns/{campaign.pk}/reports/", {})
        generated = _admin_generate_report(port, session, campaign)
    assert created == 201, text
    assert Campaign.objects.filter(title="During the outage").exists()
    assert requested == 202, report_text
    assert generated == 302
    pending = Report.objects.filter(campaign=campaign, status=ReportStatus.PENDING)
    assert pending.count() == 2
    # The broker back: the sweep finds the pending reports and they are built.
    pending.update(created_at=timezone.now() - timedelta(hours=1))
    app.conf.task_always_eager = True
    try:
        with override_settings(REPORT_STALE_SECONDS=60):
            assert sweep_stale_reports() == 2
    finally:
        app.conf.task_always_eager = settings.CELERY_TASK_ALWAYS_EAGER
    assert Report.objects.filter(campaign=campaign, status=ReportStatus.READY).count() == 2

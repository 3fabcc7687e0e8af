"""Idempotency-Key on every POST under /api/ (campaigns/api/idempotency.py)."""

from __future__ import annotations

import threading
import time
from typing import Any
from unittest import mock

import pytest
from django.db import connection
from django.test import TestCase, TransactionTestCase, override_settings
from rest_framework.test import APIClient

from campaigns.models import IdempotencyRecord, MetricPoint, Run, Team
from campaigns.services import ingest
from campaigns.tests.factories import (
    as_key,
    as_user,
    committed_campaign,
    ingest_key,
    make_user,
    points,
    post,
)

BATCH = points(*[("loss", s, 2.0) for s in range(50)])
METRICS = "/api/v1/runs/r-1/metrics/"


class IdempotencyTestCase(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.owner = make_user("olga", team=cls.team, role="owner")
        cls.campaign = committed_campaign(cls.team, cls.owner, lots=0, automatic_rules=True)
        cls.raw_key = ingest_key(cls.campaign, cls.owner)
        cls.runs_url = f"/api/v1/campaigns/{cls.campaign.pk}/runs/"

    def setUp(self) -> None:
        self.loop = as_key(self.raw_key)


class ReplayingARequest(IdempotencyTestCase):
    def setUp(self) -> None:
        super().setUp()
        post(self.loop, self.runs_url, {"run_id": "r-1"})

    def test_a_replayed_post_returns_the_stored_answer_and_creates_nothing(self) -> None:
        first = post(self.loop, METRICS, BATCH, key="k-1")
        retry = post(self.loop, METRICS, BATCH, key="k-1")
        self.assertEqual(first.status_code, 201)
        self.assertEqual(retry.status_code, first.status_code)
        self.assertEqual(retry.content, first.content)
        self.assertEqual(retry["Content-Type"], first["Content-Type"])
        self.assertEqual(retry["Idempotent-Replayed"], "true")
        self.assertEqual(MetricPoint.objects.count(), 50)

    def test_a_replayed_creation_answers_201_again_not_200(self) -> None:
        first = post(self.loop, self.runs_url, {"run_id": "r-2"}, key="create-r-2")
        retry = post(self.loop, self.runs_url, {"run_id": "r-2"}, key="create-r-2")
        self.assertEqual((first.status_code, retry.status_code), (201, 201))
        self.assertEqual(first.content, retry.content)
        self.assertEqual(Run.objects.filter(run_id="r-2").count(), 1)

    def test_the_same_key_with_another_body_is_422_and_creates_nothing(self) -> None:
        post(self.loop, METRICS, points(("loss", 1, 2.0)), key="k-2")
        other = post(self.loop, METRICS, points(("loss", 2, 1.0)), key="k-2")
        self.assertEqual(other.status_code, 422)
        self.assertIn("another request", other.json()["detail"])
        self.assertEqual(list(MetricPoint.objects.values_list("step", flat=True)), [1])

    def test_the_same_key_on_another_endpoint_is_422(self) -> None:
        post(self.loop, METRICS, {"points": []}, key="k-3")
        other = post(self.loop, "/api/v1/runs/r-1/stop/", {"points": []}, key="k-3")
        self.assertEqual(other.status_code, 422)
        self.assertEqual(Run.objects.get(run_id="r-1").status, "running")

    def test_keys_belong_to_the_caller_so_two_callers_never_share_an_answer(self) -> None:
        post(self.loop, METRICS, BATCH, key="shared")
        person = post(as_user(self.owner), METRICS, BATCH, key="shared")
        self.assertEqual(person.status_code, 201)
        self.assertNotIn("Idempotent-Replayed", person)
        self.assertEqual(MetricPoint.objects.count(), 100)

    def test_a_user_is_one_caller_whether_by_token_or_by_session(self) -> None:
        by_token = post(as_user(self.owner), METRICS, BATCH, key="k-4")
        session = APIClient()
        session.force_login(self.owner)
        by_session = post(session, METRICS, BATCH, key="k-4")
        self.assertEqual(by_session.content, by_token.content)
        self.assertEqual(by_session["Idempotent-Replayed"], "true")
        self.assertEqual(MetricPoint.objects.count(), 50)

    def test_a_refusal_is_replayed_as_it_was(self) -> None:
        bad = points(("loss", -1, 2.0))
        first = post(self.loop, METRICS, bad, key="k-5")
        retry = post(self.loop, METRICS, bad, key="k-5")
        self.assertEqual((first.status_code, retry.status_code), (400, 400))
        self.assertEqual(first.content, retry.content)

    def test_a_post_without_a_key_is_not_recorded(self) -> None:
        post(self.loop, METRICS, BATCH)
        post(self.loop, METRICS, BATCH)
        self.assertEqual(MetricPoint.objects.count(), 100)
        self.assertFalse(IdempotencyRecord.objects.filter(path=METRICS).exists())

    def test_an_unusable_key_is_400(self) -> None:
        for key in ("x" * 201, "has space", "tab\tkey"):
            with self.subTest(key=key):
                answer = post(self.loop, METRICS, BATCH, key=key)
                self.assertEqual(answer.status_code, 400)
                self.assertEqual(answer.json()["field"], "Idempotency-Key")
        self.assertFalse(MetricPoint.objects.exists())


class AnswersThatAreNotKept(IdempotencyTestCase):
    def test_a_server_error_rolls_back_everything_and_the_key_can_be_retried(self) -> None:
        post(self.loop, self.runs_url, {"run_id": "r-1"})
        loop = APIClient(raise_request_exception=False)
        loop.credentials(HTTP_AUTHORIZATION=f"Bearer {self.raw_key}")
        with mock.patch.object(ingest.rules, "evaluate_points", side_effect=RuntimeError("boom")):
            crashed = post(loop, METRICS, BATCH, key="k-6")
        self.assertEqual(crashed.status_code, 500)
        self.assertEqual(crashed.json(), {"detail": "Server error."})
        self.assertFalse(MetricPoint.objects.exists())  # the points went with the transaction
        retried = post(loop, METRICS, BATCH, key="k-6")
        self.assertEqual(retried.status_code, 201)
        self.assertNotIn("Idempotent-Replayed", retried)
        self.assertEqual(MetricPoint.objects.count(), 50)

    def test_a_403_is_not_kept_so_the_key_works_once_the_role_allows(self) -> None:
        viewer = make_user("vic", team=self.team, role="viewer")
        refused = post(as_user(viewer), self.runs_url, {"run_id": "v-1"}, key="k-7")
        self.assertEqual(refused.status_code, 403)
        self.team.memberships.filter(user=viewer).update(role="planner")
        allowed = post(as_user(viewer), self.runs_url, {"run_id": "v-1"}, key="k-7")
        self.assertEqual(allowed.status_code, 201)


def _in_threads(count: int, send: Any) -> list[Any]:
    """Run `send()` in `count` threads released together; each thread has its own connection."""
    barrier = threading.Barrier(count)
    answers: list[Any] = [None] * count

    def worker(index: int) -> None:
        try:
            barrier.wait()
            answers[index] = send()
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return answers


def _slowly(function: Any, seconds: float) -> Any:
    """`function`, but holding its transaction open a while: the others must meet it there."""

    def slow(*args: Any, **kwargs: Any) -> Any:
        result = function(*args, **kwargs)
        time.sleep(seconds)
        return result

    return slow


@pytest.mark.postgres
class ConcurrentRequestsWithOneKey(TransactionTestCase):
    # The seeded catalog comes back after the flush (conftest.py re-seeds it on post_migrate).

    def setUp(self) -> None:
        team = Team.objects.create(name="nlp")
        owner = make_user("olga", team=team, role="owner")
        self.campaign = committed_campaign(team, owner, lots=0, automatic_rules=True)
        self.raw_key = ingest_key(self.campaign, owner)
        post(as_key(self.raw_key), f"/api/v1/campaigns/{self.campaign.pk}/runs/", {"run_id": "r-1"})

    def test_concurrent_posts_with_one_key_have_one_effect_and_one_answer(self) -> None:
        slow = _slowly(ingest.append_metrics, 0.5)
        with mock.patch.object(ingest, "append_metrics", slow):
            answers = _in_threads(5, lambda: post(as_key(self.raw_key), METRICS, BATCH, key="same"))
        self.assertEqual([a.status_code for a in answers], [201] * 5)
        self.assertEqual(len({a.content for a in answers}), 1)
        self.assertEqual(sum(a.has_header("Idempotent-Replayed") for a in answers), 4)
        self.assertEqual(MetricPoint.objects.count(), 50)
        self.assertEqual(IdempotencyRecord.objects.filter(key="same").count(), 1)

    def test_concurrent_run_creations_with_one_key_create_one_run(self) -> None:
        url = f"/api/v1/campaigns/{self.campaign.pk}/runs/"
        slow = _slowly(ingest.open_run, 0.3)
        with mock.patch.object(ingest, "open_run", slow):
            answers = _in_threads(
                4, lambda: post(as_key(self.raw_key), url, {"run_id": "r-9"}, key="c")
            )
        self.assertEqual([a.status_code for a in answers], [201] * 4)
        self.assertEqual(Run.objects.filter(run_id="r-9").count(), 1)

    @override_settings(IDEMPOTENCY_WAIT_SECONDS=0.2)
    def test_past_the_bounded_wait_the_second_request_is_told_it_is_in_flight(self) -> None:
        slow = _slowly(ingest.append_metrics, 1.5)
        with mock.patch.object(ingest, "append_metrics", slow):
            answers = _in_threads(2, lambda: post(as_key(self.raw_key), METRICS, BATCH, key="busy"))
        self.assertEqual(sorted(a.status_code for a in answers), [201, 409])
        in_flight = next(a for a in answers if a.status_code == 409)
        self.assertIn("still in progress", in_flight.json()["detail"])
        self.assertEqual(MetricPoint.objects.count(), 50)
        retry = post(as_key(self.raw_key), METRICS, BATCH, key="busy")
        self.assertEqual(retry.status_code, 201)
        self.assertEqual(retry["Idempotent-Replayed"], "true")


class ReplaysAreAuthorizedAgainAndKeepNoSecret(IdempotencyTestCase):
    """docs/domain.md §26: a replay is refused as a fresh request would be, and never shows an
    issued ingest key a second time."""

    def setUp(self) -> None:
        super().setUp()
        self.keys_url = f"/api/v1/campaigns/{self.campaign.pk}/ingest-keys/"
        self.boss = make_user("bea", team=self.team, role="owner")

    def test_a_replayed_key_issue_answers_the_prefix_and_never_the_key(self) -> None:
        first = post(as_user(self.boss), self.keys_url, {"name": "ci"}, key="issue-1")
        retry = post(as_user(self.boss), self.keys_url, {"name": "ci"}, key="issue-1")
        issued = first.json()
        self.assertEqual((first.status_code, retry.status_code), (201, 201))
        self.assertTrue(issued["key"].startswith("cdk_"))
        self.assertEqual(retry["Idempotent-Replayed"], "true")
        self.assertEqual(retry.json()["key"], None)
        self.assertTrue(retry.json()["key_shown_once"])
        self.assertEqual(
            (retry.json()["id"], retry.json()["prefix"]), (issued["id"], issued["prefix"])
        )
        stored = bytes(IdempotencyRecord.objects.get(key="issue-1").response_body)
        self.assertNotIn(issued["key"].encode(), stored)

    def test_a_replay_after_the_owner_was_demoted_is_refused_with_403(self) -> None:
        post(as_user(self.boss), self.keys_url, {"name": "ci"}, key="issue-2")
        self.team.memberships.filter(user=self.boss).update(role="planner")
        retry = post(as_user(self.boss), self.keys_url, {"name": "ci"}, key="issue-2")
        self.assertEqual(retry.status_code, 403)
        self.assertNotIn("Idempotent-Replayed", retry)

    def test_a_replay_after_the_caller_left_the_team_is_404_as_a_fresh_request(self) -> None:
        post(as_user(self.boss), self.keys_url, {"name": "ci"}, key="issue-3")
        self.team.memberships.filter(user=self.boss).delete()
        retry = post(as_user(self.boss), self.keys_url, {"name": "ci"}, key="issue-3")
        self.assertEqual(retry.status_code, 404)
        self.assertNotIn("cdk_", retry.content.decode())

    def test_a_planner_demoted_to_viewer_cannot_replay_a_run_creation(self) -> None:
        planner = make_user("pia", team=self.team, role="planner")
        first = post(as_user(planner), self.runs_url, {"run_id": "p-1"}, key="run-p-1")
        self.assertEqual(first.status_code, 201)
        self.team.memberships.filter(user=planner).update(role="viewer")
        retry = post(as_user(planner), self.runs_url, {"run_id": "p-1"}, key="run-p-1")
        self.assertEqual(retry.status_code, 403)

    def test_the_check_again_leaves_nothing_behind(self) -> None:
        post(as_user(self.boss), self.keys_url, {"name": "ci"}, key="issue-4")
        post(as_user(self.boss), self.keys_url, {"name": "ci"}, key="issue-4")
        self.assertEqual(self.campaign.ingest_keys.filter(name="ci").count(), 1)

    def test_answers_stored_before_this_version_lose_the_key(self) -> None:
        """The migration scrubs the raw key out of stored issue answers (docs/domain.md §26)."""
        import importlib

        from django.apps import apps

        migration = importlib.import_module(
            "campaigns.migrations.0014_h19keys_sealed_secrets_hashed_tokens"
        )
        first = post(as_user(self.boss), self.keys_url, {"name": "ci"}, key="issue-5")
        raw = first.json()["key"]
        IdempotencyRecord.objects.filter(key="issue-5").update(response_body=first.content)
        migration.scrub_stored_keys(apps, None)
        stored = bytes(IdempotencyRecord.objects.get(key="issue-5").response_body)
        self.assertNotIn(raw.encode(), stored)
        retry = post(as_user(self.boss), self.keys_url, {"name": "ci"}, key="issue-5")
        self.assertEqual((retry.json()["key"], retry.json()["prefix"]), (None, raw[:12]))

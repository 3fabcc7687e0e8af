"""Statements per MLflow logging call (issue 20 item 6): a log call reads the key, the run and
the campaign once, and the common `log-metric` / `log-batch` case takes at most 8 statements
(the key, remembered by the process, is read again only every few seconds: issue 34 item 5).

A TransactionTestCase, so the view's own transactions are real ones (no test savepoints)."""

from __future__ import annotations

import json
import time

import pytest
from django.db import connection
from django.test import Client, TransactionTestCase, override_settings
from django.test.utils import CaptureQueriesContext

from campaigns.models import MetricPoint, PlannedItem, Team
from campaigns.services.keys import issue_ingest_key
from campaigns.services.plans import commit_plan
from campaigns.tests.factories import make_plannable, make_user

M = "/mlflow/api/2.0/mlflow/"
# The metric store's summaries and rollups (issue 21) are kept in the ingest transaction in one
# statement, and a committed campaign's frozen stop rules are read once per process
# (campaigns/services/metric_store.py, ingest.rule_specs): 10 statements before both.
BUDGET = 8


# The budget is PostgreSQL's: there the metric store's two upserts are one statement and the
# points one COPY (campaigns/services/metric_store.py); SQLite runs them apart.
@pytest.mark.postgres
class StatementsPerCall(TransactionTestCase):
    def setUp(self) -> None:
        team = Team.objects.create(name="nlp")
        owner = make_user("olga", team=team, role="owner")
        self.campaign = make_plannable(team)
        commit_plan(campaign=self.campaign, acting_user=owner)
        item = PlannedItem.objects.get(campaign=self.campaign, name="baseline")
        _key, raw = issue_ingest_key(campaign=self.campaign, acting_user=owner, item=item)
        self.client = Client(HTTP_AUTHORIZATION=f"Bearer {raw}")
        created = self.post("runs/create", {"experiment_id": str(self.campaign.pk)})
        self.run_id = created["run"]["info"]["run_id"]
        self.step = 0

    def post(self, path: str, body: dict) -> dict:
        response = self.client.post(M + path, json.dumps(body), content_type="application/json")
        self.assertEqual(response.status_code, 200, response.content)
        return response.json()

    def count(self, path: str, body: dict) -> int:
        with CaptureQueriesContext(connection) as queries:
            self.post(path, body)
        # PostgreSQL's COPY goes through the driver's own cursor and is not captured: count it.
        # Statements sent together in one round trip (the run's lock and its campaign's read,
        # campaigns/services/run_lock.py) count one each.
        sent = sum(q["sql"].count(";\n") + 1 for q in queries.captured_queries)
        return sent + (1 if connection.vendor == "postgresql" else 0)

    def metric(self, advance: bool = True) -> dict:
        self.step += 1 if advance else 0
        return {
            "key": "loss",
            "value": 1.0 / (self.step + 1),
            "step": self.step,
            "timestamp": int(time.time() * 1000),
        }

    def test_log_metric(self) -> None:
        self.count("runs/log-metric", {"run_id": self.run_id, **self.metric()})  # warm
        n = self.count("runs/log-metric", {"run_id": self.run_id, **self.metric()})
        print(f"\nlog-metric: {n} statements ({connection.vendor})")
        self.assertLessEqual(n, BUDGET)

    def test_log_batch(self) -> None:
        if connection.vendor != "postgresql":
            self.skipTest("SQLite splits a bulk insert by its variable limit; COPY is one")
        batch = {"run_id": self.run_id, "metrics": [self.metric() for _ in range(1000)]}
        self.count("runs/log-batch", batch)
        batch = {"run_id": self.run_id, "metrics": [self.metric() for _ in range(1000)]}
        n = self.count("runs/log-batch", batch)
        print(f"\nlog-batch of 1000: {n} statements ({connection.vendor})")
        self.assertLessEqual(n, BUDGET)

    def test_log_metric_without_a_step(self) -> None:
        """mlflow.log_metric without a step sends step 0 every time: one more statement looks
        for the point already stored (a retry), still within the budget."""
        for _ in range(2):
            body = {"run_id": self.run_id, **self.metric(advance=False)}
            body["value"] = time.monotonic()
            n = self.count("runs/log-metric", body)
        print(f"\nlog-metric at step 0: {n} statements ({connection.vendor})")
        self.assertLessEqual(n, BUDGET)

    def test_log_param_and_set_tag(self) -> None:
        """The other synchronous calls of a loop (issue 34 item 5): the same budget."""
        for path, body in [
            ("runs/log-parameter", lambda n: {"key": f"p{n}", "value": "1"}),
            ("runs/set-tag", lambda n: {"key": "epoch", "value": str(n)}),
        ]:
            self.count(path, {"run_id": self.run_id, **body(0)})  # warm
            n = self.count(path, {"run_id": self.run_id, **body(1)}) - 1  # no COPY
            print(f"\n{path}: {n} statements ({connection.vendor})")
            self.assertLessEqual(n, BUDGET)

    @override_settings(MLFLOW_ASYNC_COMMIT=True)
    def test_an_async_commit_is_asked_in_the_locking_round_trip(self) -> None:
        """MLFLOW_ASYNC_COMMIT (docs/mlflow.md): the transaction's commit is told not to wait
        for the disk in the statement string that locks the run: one statement more, no round
        trip more, still within the budget, and the point is stored."""
        self.count("runs/log-metric", {"run_id": self.run_id, **self.metric()})  # warm
        with CaptureQueriesContext(connection) as queries:
            self.post("runs/log-metric", {"run_id": self.run_id, **self.metric()})
        relaxed = [q["sql"] for q in queries.captured_queries if "synchronous_commit" in q["sql"]]
        self.assertEqual(len(relaxed), 1)
        self.assertTrue(relaxed[0].startswith("SET LOCAL synchronous_commit TO off;"))
        n = sum(q["sql"].count(";\n") + 1 for q in queries.captured_queries) + 1
        self.assertLessEqual(n, BUDGET)
        self.assertEqual(MetricPoint.objects.filter(run__run_id=self.run_id).count(), 2)

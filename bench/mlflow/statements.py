"""SQL statements per MLflow call on Campaign Desk, counted in the bench's own process against
the bench's database (the view code gunicorn serves, through Django's test client), so the
bench shows the speed and the statements of the same calls (issue 34 item 5: at most 8).

PostgreSQL's COPY of the points goes through the driver's own cursor and is not captured:
one is added for each call that stores points (log-metric, log-batch).
"""

from __future__ import annotations

import json
import time
from typing import Any

M = "/mlflow/api/2.0/mlflow/"
STORES_POINTS = {"log-metric", "log-batch"}


def _calls(run_id: str, n: int) -> dict[str, tuple[str, dict[str, Any]]]:
    now = int(time.time() * 1000)
    return {
        "log-metric": (
            "runs/log-metric",
            {"run_id": run_id, "key": "loss", "value": 1.0 / (n + 1), "step": n, "timestamp": now},
        ),
        "log-parameter": ("runs/log-parameter", {"run_id": run_id, "key": f"p{n}", "value": "1"}),
        "set-tag": ("runs/set-tag", {"run_id": run_id, "key": "epoch", "value": str(n)}),
        "log-batch": (
            "runs/log-batch",
            {
                "run_id": run_id,
                "metrics": [
                    {"key": "b", "value": 0.5, "step": n * 1000 + i, "timestamp": now}
                    for i in range(1000)
                ],
            },
        ),
    }


def count_statements(key: str, experiment_id: str) -> dict[str, int]:
    """Each call's statements on its second sending (the first warms the process's caches),
    and the round trips they take ("<call> round trips"; BEGIN and COMMIT included, the
    pool's connection check not)."""
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client(HTTP_AUTHORIZATION=f"Bearer {key}")

    def post(path: str, body: dict[str, Any]) -> None:
        answer = client.post(M + path, json.dumps(body), content_type="application/json")
        if answer.status_code != 200:
            raise RuntimeError(f"{path}: {answer.status_code} {answer.content[:300]!r}")

    created = client.post(
        M + "runs/create",
        json.dumps({"experiment_id": experiment_id, "run_name": "statements"}),
        content_type="application/json",
    ).json()
    run_id = created["run"]["info"]["run_id"]
    counts: dict[str, int] = {}
    trips: dict[str, int] = {}
    for name in _calls(run_id, 0):
        for n in (1, 2):
            path, body = _calls(run_id, n)[name]
            with CaptureQueriesContext(connection) as queries:
                post(path, body)
        copy = 1 if name in STORES_POINTS and connection.vendor == "postgresql" else 0
        # Statements sent together in one round trip (campaigns/services/run_lock.py) count one
        # each; `round trips` counts them as sent.
        counts[name] = sum(q["sql"].count(";\n") + 1 for q in queries.captured_queries) + copy
        trips[name] = len(queries) + copy
    post("runs/update", {"run_id": run_id, "status": "FINISHED"})
    connection.close()
    return {**counts, **{f"{name} round trips": n for name, n in trips.items()}}

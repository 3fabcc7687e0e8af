"""Celery: the broker, queues by kind of work, every task's time limits and the beat schedule.
config/settings.py imports each setting by name; README "Configuration (environment)" lists the
variables."""

import os
from typing import Any

from config.env import env_bool, env_int

CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "")
CELERY_RESULT_BACKEND = os.environ.get("CELERY_RESULT_BACKEND", "") or None
# No broker configured: the embedded shape runs tasks inline, in the request's process.
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", not CELERY_BROKER_URL)
CELERY_TASK_EAGER_PROPAGATES = True
# A killed worker must not lose a message: acknowledge after the task ran, and requeue
# when the worker process dies mid-task.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Redis redelivers a message not acknowledged this many seconds after a worker took it (a task
# running or prefetched, or one whose whole worker died). It must exceed the longest task plus
# the wait of a prefetched message behind it, or a running task gets a duplicate: the longest,
# a closing report, takes 0.75 s at 2,000 runs and 1,000,000 points (bench/report), a forecast
# 0.18 s, so 900 s leaves three orders of magnitude for larger campaigns and a slow database.
# Reports and forecasts do not wait for it: beat sweeps those (REPORT_STALE_SECONDS,
# STALE_ESTIMATE_SECONDS).
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": int(os.environ.get("CELERY_VISIBILITY_TIMEOUT", "900"))
}
# Queues by kind of work (README, Production notes): a slow webhook receiver can only ever hold
# the delivery workers; reports and forecasts have their own. A worker started without -Q
# consumes all four (development, the tests); docker-compose runs one worker service per queue.
# The default queue is named by the environment so that several deployments (or parallel test
# workers) can share a Redis; the other queues are named after it unless it is "celery".
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("CELERY_TASK_DEFAULT_QUEUE", "celery")


def celery_queues(base: str) -> tuple[dict[str, str], dict[str, Any], dict[str, Any]]:
    """(kind → queue name, CELERY_TASK_QUEUES, CELERY_TASK_ROUTES) for a default queue `base`;
    the kinds' queues are named after it unless it is "celery" (the tests give each worker
    process its own)."""
    names = {"default": base} | {
        kind: kind if base == "celery" else f"{base}-{kind}"
        for kind in ("delivery", "reports", "forecasts")
    }
    queues = {name: {"exchange": name, "routing_key": name} for name in names.values()}
    routes = {
        "ledger.deliver_alerts": {"queue": names["delivery"]},
        "ledger.retry_alert_deliveries": {"queue": names["delivery"]},
        "ledger.build_closing_report": {"queue": names["reports"]},
        "ledger.sweep_stale_reports": {"queue": names["reports"]},
        # Bulk database work beside the reports, away from the webhooks' workers.
        "campaigns.tasks.pack_run_points": {"queue": names["reports"]},
        "campaigns.tasks.pack_metric_points": {"queue": names["reports"]},
        "estimates.tasks.*": {"queue": names["forecasts"]},
    }
    return names, queues, routes


TASK_QUEUES, CELERY_TASK_QUEUES, CELERY_TASK_ROUTES = celery_queues(CELERY_TASK_DEFAULT_QUEUE)
# Every task has a soft time limit (SoftTimeLimitExceeded raised in the task: it records a
# failure and is retried) and a hard one (the pool child is killed; acks_late with
# reject_on_worker_lost requeues the message). Defaults for all, then per kind; all below the
# visibility timeout (900 s), and the delivery's below its outbox lease (300 s).
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 300)
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 360)
TASK_TIME_LIMITS = {
    # name: (soft, hard) seconds
    # A round sends for ALERT_DELIVERY_ROUND_SECONDS (30), then at most one more send (a 10 s
    # webhook deadline, an e-mail at 10 s an operation).
    "ledger.deliver_alerts": (60, 90),
    "ledger.retry_alert_deliveries": (60, 90),
    "ledger.scan_alerts": (120, 150),
    "ledger.build_closing_report": (300, 360),  # about a second at 1,000,000 points
    "ledger.sweep_stale_reports": (60, 90),
    "estimates.tasks.recompute_forecast": (120, 150),  # 0.18 s measured
    "estimates.tasks.sweep_stale_estimates": (60, 90),
    "campaigns.tasks.purge_idempotency_records": (300, 360),
    "campaigns.tasks.drop_old_metric_points": (600, 660),  # stops itself after its budget
    "campaigns.tasks.pack_metric_points": (600, 660),  # stops itself after its budget
    "campaigns.tasks.pack_run_points": (300, 360),  # ~10 s for a 1,000,000-point run
    "campaigns.tasks.sweep_orphan_artifact_files": (300, 360),
    "ledger.scan_team_budgets": (240, 300),
}
# Seconds of deleting one retention task does before leaving the rest to the next beat.
METRIC_RETENTION_SECONDS = float(os.environ.get("METRIC_RETENTION_SECONDS", "300"))
# The metric store's two tiers (docs/metric_store.md §3): points stay hot rows this long (a
# retried batch is recognised among them), then the beat (every METRIC_PACK_BEAT_SECONDS,
# for up to METRIC_PACK_SECONDS of work) or a run's finish packs them into blocks.
METRIC_PACK_AFTER_SECONDS = float(os.environ.get("METRIC_PACK_AFTER_SECONDS", "900"))
METRIC_PACK_SECONDS = float(os.environ.get("METRIC_PACK_SECONDS", "300"))
METRIC_PACK_BEAT_SECONDS = float(os.environ.get("METRIC_PACK_BEAT_SECONDS", "900"))
CELERY_TASK_ANNOTATIONS = {
    name: {"soft_time_limit": soft, "time_limit": hard}
    for name, (soft, hard) in TASK_TIME_LIMITS.items()
}
# Redis restarting must not end the worker: keep reconnecting, at start-up too.
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_BEAT_SCHEDULE = {
    "sweep-stale-estimates": {
        "task": "estimates.tasks.sweep_stale_estimates",
        "schedule": float(os.environ.get("STALE_SWEEP_SECONDS", "300")),
    },
    "purge-idempotency-records": {
        "task": "campaigns.tasks.purge_idempotency_records",
        "schedule": 3600.0,
    },
    # Each team's metric retention (docs/domain.md §27): hourly, a bounded amount each time.
    "drop-old-metric-points": {
        "task": "campaigns.tasks.drop_old_metric_points",
        "schedule": 3600.0,
    },
    # Hot points older than METRIC_PACK_AFTER_SECONDS into blocks, running runs included.
    "pack-metric-points": {
        "task": "campaigns.tasks.pack_metric_points",
        "schedule": METRIC_PACK_BEAT_SECONDS,
    },
    # Upload files a killed worker left without a row (campaigns/services/artifact_files.py).
    "sweep-orphan-artifact-files": {
        "task": "campaigns.tasks.sweep_orphan_artifact_files",
        "schedule": 3600.0,
    },
    "sweep-stale-reports": {
        "task": "ledger.sweep_stale_reports",
        "schedule": float(os.environ.get("REPORT_SWEEP_SECONDS", "60")),
    },
    "scan-alerts": {
        "task": "ledger.scan_alerts",
        "schedule": float(os.environ.get("ALERT_SCAN_SECONDS", "300")),
    },
    "retry-alert-deliveries": {
        "task": "ledger.retry_alert_deliveries",
        "schedule": float(os.environ.get("ALERT_RETRY_SECONDS", "60")),
    },
}

"""Campaign Desk settings: one file, configured from the environment.

Defaults are the embedded shape that `make run` serves: SQLite and Celery running tasks inline.
`DATABASE_URL` (PostgreSQL via psycopg 3) and `CELERY_BROKER_URL` (Redis) switch to the
production shape that docker-compose.yml runs.
"""

import os
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import dj_database_url
import django_stubs_ext
from django.core.exceptions import ImproperlyConfigured

from config.secret_key import installation_secret_key

# Lets admin and form classes be subscripted (ModelAdmin[Campaign]) for mypy at run time.
django_stubs_ext.monkeypatch()

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    try:
        return int(os.environ.get(name) or default)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be a whole number.") from exc


def env_list(name: str, default: str) -> list[str]:
    return [part.strip() for part in os.environ.get(name, default).split(",") if part.strip()]


# Off unless the environment turns it on: an installation that forgot to configure itself must
# not show tracebacks and settings to whoever asks (README, Production notes).
DEBUG = env_bool("DEBUG", False)

# The environment's key, else this installation's own, generated once into SECRET_KEY_FILE
# (git-ignored, 0600; config/secret_key.py). Processes that share no disk (containers) must be
# given SECRET_KEY, or each would sign with its own.
SECRET_KEY = os.environ.get("SECRET_KEY", "") or installation_secret_key(
    Path(os.environ.get("SECRET_KEY_FILE") or BASE_DIR / ".secret_key")
)

# `make run` serves plain HTTP on 127.0.0.1 (LOCAL_HTTP=1): no redirect to HTTPS and cookies
# without the Secure flag. Anything reachable by others runs behind TLS with it unset.
LOCAL_HTTP = env_bool("LOCAL_HTTP", False)

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI served from the project, not a CDN
    "pgtrigger",
    "catalog",
    "campaigns",
    "estimates",
    "ledger",
    "mlflow_api",
    "axes",  # login lockout (below)
]

MIDDLEWARE = [
    # First: drops X-Forwarded-* unless the connection is a trusted proxy's (config/client_ip.py).
    "config.client_ip.ProxyHeadersMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # After authentication (a session user is a principal too); wraps every view it replays.
    "campaigns.api.idempotency.IdempotencyMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        conn_max_age=int(os.environ.get("CONN_MAX_AGE", "60")),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Inline Celery tasks and the dev server share one file: wait rather than fail on a lock.
    DATABASES["default"].setdefault("OPTIONS", {})["timeout"] = 20
elif DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # A database that does not answer fails a request in seconds instead of hanging it, health
    # included (docs/operations.md §1): connecting takes at most
    # DB_CONNECT_TIMEOUT s, a statement at most DB_STATEMENT_TIMEOUT s (0: none; the workers'
    # bulk tasks get their own in docker-compose.yml).
    _db_options = DATABASES["default"].setdefault("OPTIONS", {})
    _db_options.setdefault("connect_timeout", env_int("DB_CONNECT_TIMEOUT", 5))
    _statement_ms = env_int("DB_STATEMENT_TIMEOUT", 30) * 1000
    if _statement_ms > 0:
        _db_options["options"] = f"-c statement_timeout={_statement_ms}"
    # DB_POOL_MAX_SIZE: each process's connections come from a pool of at most that many
    # (psycopg_pool), so the web tier holds at most workers × DB_POOL_MAX_SIZE, below
    # PostgreSQL's max_connections whatever the number of threads; a request waits up to
    # DB_POOL_TIMEOUT s for one, then answers 503. Unset: one connection per thread.
    if env_int("DB_POOL_MAX_SIZE", 0) > 0:
        _db_options["pool"] = {
            "min_size": 1,
            "max_size": env_int("DB_POOL_MAX_SIZE", 0),
            "timeout": env_int("DB_POOL_TIMEOUT", 10),
        }
        DATABASES["default"]["CONN_MAX_AGE"] = 0  # a pooled connection goes back at request end

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# The campaign page posts every row of its plan tables (campaigns/admin/inlines.py: a page of
# 25 items, their work and 25 stages, about 35 fields a plan row, and the other tables):
# Django's default of 1,000 fields refused the save of any plan past about 28 items with a
# 400 (issue 21).
DATA_UPLOAD_MAX_NUMBER_FIELDS = 5000

# The MLflow facade's logging calls (log-metric, log-batch, log-parameter, set-tag...) commit
# without waiting for PostgreSQL to flush its WAL to disk when on: about 3 ms less a call here,
# and a crash of the database server may lose the last fraction of a second of acknowledged
# logging (never half of a call). Off by default (docs/mlflow.md, "Speed").
MLFLOW_ASYNC_COMMIT = env_bool("MLFLOW_ASYNC_COMMIT", False)

STATIC_URL = "static/"
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", BASE_DIR / "staticfiles"))
# With DEBUG off pages name collectstatic's hashed, compressed copies, served by WhiteNoise:
# `make run` and the image collect them first; the tests read the sources (conftest.py).
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}

# Uploaded files (MLflow artifacts) go to the default storage: this folder, or any
# django-storages backend configured in STORAGES["default"].
MEDIA_ROOT = Path(os.environ.get("MEDIA_ROOT", BASE_DIR / "media"))
MEDIA_URL = "media/"
# One artifact upload at most this many bytes (413 beyond); the sha256 is taken while streaming.
ARTIFACT_MAX_BYTES = int(os.environ.get("ARTIFACT_MAX_BYTES", str(5 * 1024**3)))
# Quotas (docs/domain.md §23; 413 naming the setting): files and bytes per run and per team.
ARTIFACT_MAX_FILES_PER_RUN = env_int("ARTIFACT_MAX_FILES_PER_RUN", 1000)
ARTIFACT_MAX_BYTES_PER_RUN = env_int("ARTIFACT_MAX_BYTES_PER_RUN", 50 * 1024**3)
ARTIFACT_MAX_FILES_PER_TEAM = env_int("ARTIFACT_MAX_FILES_PER_TEAM", 100_000)
ARTIFACT_MAX_BYTES_PER_TEAM = env_int("ARTIFACT_MAX_BYTES_PER_TEAM", 1024**4)
# One upload must finish within this many seconds (the partial file is deleted otherwise).
ARTIFACT_UPLOAD_SECONDS = env_int("ARTIFACT_UPLOAD_SECONDS", 3600)
# Uploads under way at once, per ingest key or user and across the web tier (429 past either):
# slow bodies hold threads, and the API and the health probe need some (README, Production
# notes). The total is below one worker's threads (compose: 3 workers × 32).
ARTIFACT_UPLOADS_PER_KEY = env_int("ARTIFACT_UPLOADS_PER_KEY", 4)
ARTIFACT_UPLOADS_TOTAL = env_int("ARTIFACT_UPLOADS_TOTAL", 24)

LOGIN_URL = "admin:login"

# --- Security (production shape: DEBUG=0 behind a TLS-terminating proxy) ---
# The addresses (CIDRs, comma-separated) whose X-Forwarded-For and -Proto are believed; from any
# other address those headers are dropped (config/client_ip.py). docker-compose gives the proxy
# a fixed address and names it here. Empty: no proxy is trusted, the socket's address counts.
TRUSTED_PROXIES = tuple(env_list("TRUSTED_PROXIES", ""))
# Believed only from TRUSTED_PROXIES: ProxyHeadersMiddleware drops the header from anyone else.
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
if not DEBUG and not LOCAL_HTTP:
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    # The health probe of docker-compose speaks plain HTTP inside the network.
    SECURE_REDIRECT_EXEMPT = [r"^api/v1/health/$"]
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", "31536000"))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", True)
    # Preload lists are a commitment for the whole domain that is slow to undo: by setting only
    # (SECURE_HSTS_PRELOAD=1); `check --deploy`'s reminder (security.W021) is silenced for that.
    SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
    if not SECURE_HSTS_PRELOAD:
        SILENCED_SYSTEM_CHECKS = ["security.W021"]

# --- Content-Security-Policy (django-csp), on every page the site serves ---
# Scripts only from our own static files (no inline script, no handler attribute, no eval): a
# name or note that slipped through escaping still could not run. Styles allow inline: the
# admin's and our templates' style attributes, and Swagger UI's, which its script sets.
# The closing report's HTML rendering sends its own, stricter policy (ledger/api/views.py).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}

# --- Login lockout (django-axes) ---
# Wrong passwords for one username from one client address: after LOGIN_FAILURE_LIMIT of them
# that pair is refused, the right password included, for LOGIN_LOCKOUT_MINUTES (each further
# try restarts the wait), with a 429 page (templates/admin/locked_out.html). A success before
# the limit forgets the failures. By pair, so that a stranger cannot lock a user out from
# everywhere. The client address is the one the proxy saw (config/client_ip.py).
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("LOGIN_LOCKOUT_MINUTES", 15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "admin/locked_out.html"
AXES_HTTP_RESPONSE_CODE = 429
AXES_CLIENT_IP_CALLABLE = "config.client_ip.client_ip"
# Only failures are kept (a row per username and address); successful logins are not logged.
AXES_DISABLE_ACCESS_LOG = True
AUTHENTICATION_BACKENDS = [
    # First: refuses a locked-out pair before any backend checks the password.
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
# Last: turns the backend's refusal into the lockout page.
MIDDLEWARE.append("axes.middleware.AxesMiddleware")

# --- REST framework ---
REST_FRAMEWORK = {
    # JSON only: the form parsers let empty strings through as values. orjson-based: it also
    # refuses what PostgreSQL cannot store (lone surrogates) and numbers that overflow.
    "DEFAULT_PARSER_CLASSES": ["campaigns.api.parsers.JSONParser"],
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "campaigns.api.authentication.IngestKeyAuthentication",
        "campaigns.api.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["campaigns.api.permissions.TeamRole"],
    "DEFAULT_THROTTLE_CLASSES": [
        "campaigns.api.throttles.IngestKeyThrottle",
        "campaigns.api.throttles.UserThrottle",
    ],
    "EXCEPTION_HANDLER": "campaigns.views.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "campaigns.api.pagination.Pagination",
    "PAGE_SIZE": 100,
    "COERCE_DECIMAL_TO_STRING": True,
    "DEFAULT_THROTTLE_RATES": {
        "ingest_key": os.environ.get("INGEST_KEY_THROTTLE", "6000/min"),
        "user": os.environ.get("USER_THROTTLE", "6000/min"),
    },
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Campaign Desk API",
    "DESCRIPTION": "Plan and track ML training campaigns: runs, stop rules, estimates, ledger.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # docs/api.md: no anonymous access to anything but /api/v1/health/ (the docs page works from an
    # admin session).
    # Ingest keys are refused (403): they reach only the ingest paths (docs/api.md).
    "SERVE_PERMISSIONS": ["campaigns.api.permissions.PersonNotKey"],
    # The docs page loads Swagger UI from our own static files (drf-spectacular-sidecar, a
    # pinned build): it works offline and sends nothing to a third party.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # One name per choice set shared by several components (drf-spectacular warns otherwise,
    # and `check --deploy` treats its warnings as failures).
    "ENUM_NAME_OVERRIDES": {
        "CampaignStatusEnum": "campaigns.models.CampaignStatus",
        "RunStatusEnum": "campaigns.models.RunStatus",
        "RunKindEnum": "campaigns.models.RunKind",
        "CheckpointComponentEnum": "campaigns.domain.stop_rules.COMPONENT_ORDER",
        "AlertChannelKindEnum": "ledger.models.ChannelKind",
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "campaigns.api.schema.add_error_responses",
    ],
}

# --- Celery ---
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "")

# --- Cache (throttle buckets) ---
# Every web process must count against the same buckets, or a limit multiplies by the number of
# gunicorn workers: with Redis (REDIS_URL, else the broker's Redis), the cache lives there; the
# embedded shape (one process) keeps a local-memory cache. Throttles count atomically in either
# (campaigns/api/throttles.py). Without REDIS_URL the cache shares the broker's database: its keys
# are prefixed, but cache.clear() would flush the queue too; docker-compose gives it its own.
REDIS_URL = os.environ.get("REDIS_URL", "") or (
    CELERY_BROKER_URL if CELERY_BROKER_URL.startswith(("redis://", "rediss://")) else ""
)
CACHES = {
    "default": (
        {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            # Separate prefixes let several sets of processes share one Redis (the parallel tests).
            "KEY_PREFIX": os.environ.get("CACHE_KEY_PREFIX", "campaign-desk"),
            # A Redis that stops answering costs a request at most this long (the throttle
            # then fails open: campaigns/api/throttles.py).
            "OPTIONS": {
                "socket_connect_timeout": float(os.environ.get("REDIS_TIMEOUT", "1")),
                "socket_timeout": float(os.environ.get("REDIS_TIMEOUT", "1")),
            },
        }
        if REDIS_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}
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
CELERY_TIMEZONE = TIME_ZONE
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

# Alerts (docs/domain.md §19): a lot ending within this many hours raises one; webhook
# deliveries are retried after ALERT_WEBHOOK_BACKOFF seconds, doubling each time.
ALERT_LOT_HOURS = float(os.environ.get("ALERT_LOT_HOURS", "12"))
ALERT_WEBHOOK_BACKOFF = float(os.environ.get("ALERT_WEBHOOK_BACKOFF", "30"))
# One deadline for a whole webhook POST (connect, TLS, request, status line), not per read.
ALERT_WEBHOOK_TIMEOUT = float(os.environ.get("ALERT_WEBHOOK_TIMEOUT", "10"))
# Webhook URLs are https only and must resolve to public addresses (campaigns/outbound.py):
# WEBHOOK_ALLOW_HTTP=1 also allows http (development); WEBHOOK_ALLOWED_NETWORKS lists networks
# the operator trusts anyway (CIDRs, comma-separated, e.g. an internal receiver's 10.1.2.0/24).
WEBHOOK_ALLOW_HTTP = env_bool("WEBHOOK_ALLOW_HTTP", False)
# The alert outbox (docs/domain.md §19.5): a delivery is attempted at most this many times; one
# claimed by a worker and not finished within the lease is taken to be a dead worker's and sent
# again (same X-Desk-Delivery id). The lease exceeds the delivery task's hard time limit.
ALERT_DELIVERY_MAX_ATTEMPTS = int(os.environ.get("ALERT_DELIVERY_MAX_ATTEMPTS", "8"))
ALERT_DELIVERY_LEASE_SECONDS = float(os.environ.get("ALERT_DELIVERY_LEASE_SECONDS", "300"))
# Seconds of sending one delivery round does before handing the rest to the next round.
ALERT_DELIVERY_ROUND_SECONDS = float(os.environ.get("ALERT_DELIVERY_ROUND_SECONDS", "30"))
WEBHOOK_ALLOWED_NETWORKS = env_list("WEBHOOK_ALLOWED_NETWORKS", "")

# A request failing because PostgreSQL, Redis or the broker is unreachable answers 503 with this
# Retry-After (campaigns/dependencies.py); the client retries with the same Idempotency-Key.
UNAVAILABLE_RETRY_AFTER = int(os.environ.get("UNAVAILABLE_RETRY_AFTER", "5"))

# Stored Idempotency-Key responses are kept this long (a week covers any sane retry).
IDEMPOTENCY_RETENTION_HOURS = int(os.environ.get("IDEMPOTENCY_RETENTION_HOURS", "168"))

# Estimates left stale longer than this are re-enqueued by the periodic sweep.
STALE_ESTIMATE_SECONDS = int(os.environ.get("STALE_ESTIMATE_SECONDS", "600"))


def env_seconds(name: str, default: str) -> float:
    try:
        seconds = float(os.environ.get(name) or default)
    except ValueError:
        seconds = 0.0
    if not 0 < seconds < float("inf"):
        raise ImproperlyConfigured(f"{name} must be a positive number of seconds.")
    return seconds


# Closing reports left pending or running longer than this are re-enqueued by the periodic
# sweep (a build takes about a second; a dead worker's report waits this plus the sweep
# interval, REPORT_SWEEP_SECONDS, rather than the visibility timeout).
REPORT_STALE_SECONDS = env_seconds("REPORT_STALE_SECONDS", "300")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
}

# Email (alerts to team owners): the console by default; SMTP by configuration, e.g.
# EMAIL_BACKEND=django.core.mail.backends.smtp.EmailBackend EMAIL_HOST=smtp.example.org.
EMAIL_BACKEND = os.environ.get("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
EMAIL_HOST = os.environ.get("EMAIL_HOST", "localhost")
EMAIL_PORT = int(os.environ.get("EMAIL_PORT", "25"))
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = os.environ.get("EMAIL_USE_TLS", "") == "1"
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "campaign-desk@localhost")
# An SMTP server that stops answering must not hold a delivery worker (seconds per operation).
EMAIL_TIMEOUT = float(os.environ.get("EMAIL_TIMEOUT", "10"))

# --- h22 (issue 22): team budgets, exports, metrics, Slack/Teams alerts, OIDC sign-in ---------
# Kept in one block so that it merges as one piece; README "Team budgets" … "Metrics" explain.
CELERY_BEAT_SCHEDULE["scan-team-budgets"] = {
    "task": "ledger.scan_team_budgets",
    "schedule": float(os.environ.get("ALERT_SCAN_SECONDS", "300")),
}
# Prometheus /metrics (README "Metrics"): a bearer token, and/or client networks (CIDRs,
# comma-separated); neither set: /metrics answers 404. Counters live in the default cache
# (Redis when configured), so every gunicorn worker counts into the same figures.
METRICS_TOKEN = os.environ.get("METRICS_TOKEN", "")
METRICS_ALLOWED_NETWORKS = tuple(
    n.strip() for n in os.environ.get("METRICS_ALLOWED_NETWORKS", "").split(",") if n.strip()
)
METRICS_CELERY_QUEUES = tuple(
    q.strip() for q in os.environ.get("METRICS_CELERY_QUEUES", "").split(",") if q.strip()
)
MIDDLEWARE.append("ledger.operations.middleware.CountingMiddleware")

# Single sign-on with OpenID Connect (README "Single sign-on"; mozilla-django-oidc). Without
# OIDC_RP_CLIENT_ID nothing changes: local passwords only. The app has no models.
INSTALLED_APPS.append("mozilla_django_oidc")
TEMPLATES[0]["OPTIONS"]["context_processors"].append("ledger.views.sso.context")  # type: ignore[index]
OIDC_RP_CLIENT_ID = os.environ.get("OIDC_RP_CLIENT_ID", "")
OIDC_RP_CLIENT_SECRET = os.environ.get("OIDC_RP_CLIENT_SECRET", "")
OIDC_OP_AUTHORIZATION_ENDPOINT = os.environ.get("OIDC_OP_AUTHORIZATION_ENDPOINT", "")
OIDC_OP_TOKEN_ENDPOINT = os.environ.get("OIDC_OP_TOKEN_ENDPOINT", "")
OIDC_OP_USER_ENDPOINT = os.environ.get("OIDC_OP_USER_ENDPOINT", "")
OIDC_OP_JWKS_ENDPOINT = os.environ.get("OIDC_OP_JWKS_ENDPOINT", "")
OIDC_RP_SIGN_ALGO = os.environ.get("OIDC_RP_SIGN_ALGO", "RS256")
OIDC_RP_SCOPES = os.environ.get("OIDC_RP_SCOPES", "openid email profile")
OIDC_USE_PKCE = True
OIDC_GROUPS_CLAIM = os.environ.get("OIDC_GROUPS_CLAIM", "groups")
# TEAM:ROLE=GROUP[|GROUP…], comma-separated (ledger/domain/sso_roles.py).
OIDC_TEAM_ROLES = os.environ.get("OIDC_TEAM_ROLES", "")
LOGIN_REDIRECT_URL = "/admin/"
LOGOUT_REDIRECT_URL = "/admin/login/"
# Accounts are found by the ID token's issuer and subject (ledger/views/sso.py); with OIDC_OP_ISSUER
# set, a token from any other issuer is refused.
OIDC_OP_ISSUER = os.environ.get("OIDC_OP_ISSUER", "")
# Every call to the provider (token, userinfo, keys) gives up after this many seconds.
OIDC_TIMEOUT = env_seconds("OIDC_TIMEOUT", "10")
# Signing out ends the provider's session too (its end_session endpoint, with the ID token as
# hint): without it, "Log out" signed straight back in.
OIDC_OP_LOGOUT_ENDPOINT = os.environ.get("OIDC_OP_LOGOUT_ENDPOINT", "")
OIDC_STORE_ID_TOKEN = True
OIDC_OP_LOGOUT_URL_METHOD = "ledger.views.sso.provider_logout_url"
# Session refresh (mozilla-django-oidc's SessionRefresh): a provider-signed-in session asks the
# provider again (prompt=none) after this many seconds; a refusal (the account was disabled
# there) ends the session and deletes the user's API tokens (ledger.views.sso.DeskCallbackView).
OIDC_RENEW_ID_TOKEN_EXPIRY_SECONDS = int(env_seconds("OIDC_RENEW_SECONDS", "900"))
OIDC_CALLBACK_CLASS = "ledger.views.sso.DeskCallbackView"
OIDC_EXEMPT_URLS = [re.compile(r"^/(api|mlflow)/"), "/metrics"]
MIDDLEWARE.insert(
    MIDDLEWARE.index("django.contrib.auth.middleware.AuthenticationMiddleware") + 1,
    "mozilla_django_oidc.middleware.SessionRefresh",
)
# An API token minted from a signed-in session (POST /accounts/token/) expires after this.
API_TOKEN_HOURS = env_seconds("API_TOKEN_HOURS", "24")
if OIDC_RP_CLIENT_ID:
    AUTHENTICATION_BACKENDS = [
        "axes.backends.AxesStandaloneBackend",
        "ledger.views.sso.DeskOIDCBackend",
        "django.contrib.auth.backends.ModelBackend",
    ]
# --- end h22 ---------------------------------------------------------------------------------

# --- i30 (issue 30 items 3-4): runs measure their time ---------------------------------------
# A run is heard from by its heartbeats (the client's every RUN_HEARTBEAT_SECONDS unless it
# states its own interval) and by every batch, throughput and checkpoint. One not heard from
# for RUN_SILENT_MULTIPLE × its interval, and at least RUN_SILENT_MIN_SECONDS, has gone silent:
# the beat task (every RUN_SILENCE_SWEEP_SECONDS) ends it as failed, its hours ending at its
# last heartbeat (docs/domain.md §5.8).
RUN_HEARTBEAT_SECONDS = float(os.environ.get("RUN_HEARTBEAT_SECONDS", "60"))
RUN_SILENT_MULTIPLE = float(os.environ.get("RUN_SILENT_MULTIPLE", "5"))
RUN_SILENT_MIN_SECONDS = float(os.environ.get("RUN_SILENT_MIN_SECONDS", "900"))
CELERY_BEAT_SCHEDULE["end-silent-runs"] = {
    "task": "campaigns.tasks.end_silent_runs",
    "schedule": float(os.environ.get("RUN_SILENCE_SWEEP_SECONDS", "60")),
}
TASK_TIME_LIMITS["campaigns.tasks.end_silent_runs"] = (120, 150)
CELERY_TASK_ANNOTATIONS["campaigns.tasks.end_silent_runs"] = {
    "soft_time_limit": 120,
    "time_limit": 150,
}
# --- end i30 ---------------------------------------------------------------------------------

# A team invitation's link works this many days (campaigns/services/invitations.py).
INVITATION_DAYS = env_seconds("INVITATION_DAYS", "7")

"""Campaign Desk settings: one file, configured from the environment.

Defaults are the embedded shape that `make run` serves: SQLite and Celery running tasks inline.
`DATABASE_URL` (PostgreSQL via psycopg 3) and `CELERY_BROKER_URL` (Redis) switch to the
production shape that docker-compose.yml runs.
"""

import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
import django_stubs_ext

from config.alert_settings import (  # noqa: F401 (settings Django reads by name)
    ALERT_DELIVERY_LEASE_SECONDS,
    ALERT_DELIVERY_MAX_ATTEMPTS,
    ALERT_DELIVERY_ROUND_SECONDS,
    ALERT_LOT_HOURS,
    ALERT_WEBHOOK_BACKOFF,
    ALERT_WEBHOOK_TIMEOUT,
    DEFAULT_FROM_EMAIL,
    EMAIL_BACKEND,
    EMAIL_HOST,
    EMAIL_HOST_PASSWORD,
    EMAIL_HOST_USER,
    EMAIL_PORT,
    EMAIL_TIMEOUT,
    EMAIL_USE_TLS,
    WEBHOOK_ALLOW_HTTP,
    WEBHOOK_ALLOWED_NETWORKS,
)
from config.api_settings import REST_FRAMEWORK, SPECTACULAR_SETTINGS  # noqa: F401
from config.celery_settings import (  # noqa: F401 (settings Django reads by name)
    CELERY_ACCEPT_CONTENT,
    CELERY_BEAT_SCHEDULE,
    CELERY_BROKER_CONNECTION_MAX_RETRIES,
    CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP,
    CELERY_BROKER_TRANSPORT_OPTIONS,
    CELERY_BROKER_URL,
    CELERY_RESULT_BACKEND,
    CELERY_TASK_ACKS_LATE,
    CELERY_TASK_ALWAYS_EAGER,
    CELERY_TASK_ANNOTATIONS,
    CELERY_TASK_DEFAULT_QUEUE,
    CELERY_TASK_EAGER_PROPAGATES,
    CELERY_TASK_QUEUES,
    CELERY_TASK_REJECT_ON_WORKER_LOST,
    CELERY_TASK_ROUTES,
    CELERY_TASK_SERIALIZER,
    CELERY_TASK_SOFT_TIME_LIMIT,
    CELERY_TASK_TIME_LIMIT,
    CELERY_WORKER_PREFETCH_MULTIPLIER,
    METRIC_PACK_AFTER_SECONDS,
    METRIC_PACK_BEAT_SECONDS,
    METRIC_PACK_SECONDS,
    METRIC_RETENTION_SECONDS,
    TASK_QUEUES,
    TASK_TIME_LIMITS,
    celery_queues,
)
from config.env import (
    env_bool,
    env_int,
    env_list,
    env_seconds,
)
from config.oidc_settings import (  # noqa: F401 (settings Django reads by name)
    LOGIN_REDIRECT_URL,
    LOGOUT_REDIRECT_URL,
    OIDC_CALLBACK_CLASS,
    OIDC_EXEMPT_URLS,
    OIDC_GROUPS_CLAIM,
    OIDC_OP_AUTHORIZATION_ENDPOINT,
    OIDC_OP_ISSUER,
    OIDC_OP_JWKS_ENDPOINT,
    OIDC_OP_LOGOUT_ENDPOINT,
    OIDC_OP_LOGOUT_URL_METHOD,
    OIDC_OP_TOKEN_ENDPOINT,
    OIDC_OP_USER_ENDPOINT,
    OIDC_RENEW_ID_TOKEN_EXPIRY_SECONDS,
    OIDC_RP_CLIENT_ID,
    OIDC_RP_CLIENT_SECRET,
    OIDC_RP_SCOPES,
    OIDC_RP_SIGN_ALGO,
    OIDC_STORE_ID_TOKEN,
    OIDC_TEAM_ROLES,
    OIDC_TIMEOUT,
    OIDC_USE_PKCE,
)
from config.secret_key import installation_secret_key

# Lets admin and form classes be subscripted (ModelAdmin[Campaign]) for mypy at run time.
django_stubs_ext.monkeypatch()

BASE_DIR = Path(__file__).resolve().parent.parent


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

# --- REST framework and its OpenAPI schema: config/api_settings.py ---

# --- Celery: config/celery_settings.py (queues, time limits, the beat schedule) ---
CELERY_TIMEZONE = TIME_ZONE

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

# A request failing because PostgreSQL, Redis or the broker is unreachable answers 503 with this
# Retry-After (campaigns/dependencies.py); the client retries with the same Idempotency-Key.
UNAVAILABLE_RETRY_AFTER = int(os.environ.get("UNAVAILABLE_RETRY_AFTER", "5"))

# Stored Idempotency-Key responses are kept this long (a week covers any sane retry).
IDEMPOTENCY_RETENTION_HOURS = int(os.environ.get("IDEMPOTENCY_RETENTION_HOURS", "168"))

# Estimates left stale longer than this are re-enqueued by the periodic sweep.
STALE_ESTIMATE_SECONDS = int(os.environ.get("STALE_ESTIMATE_SECONDS", "600"))

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

# Single sign-on with OpenID Connect (README "Single sign-on"; mozilla-django-oidc; its settings
# in config/oidc_settings.py). Without OIDC_RP_CLIENT_ID nothing changes: local passwords only.
# The app has no models.
INSTALLED_APPS.append("mozilla_django_oidc")
TEMPLATES[0]["OPTIONS"]["context_processors"].append("ledger.views.sso.context")  # type: ignore[index]
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

"""Campaign Desk settings: one file, configured from the environment.

Defaults are the embedded shape that `make run` serves: SQLite and Celery running tasks inline.
`DATABASE_URL` (PostgreSQL via psycopg 3) and `CELERY_BROKER_URL` (Redis) switch to the
production shape that docker-compose.yml runs.
"""

import os
from pathlib import Path

import dj_database_url
import django_stubs_ext
from django.core.exceptions import ImproperlyConfigured

# Lets admin and form classes be subscripted (ModelAdmin[Campaign]) for mypy at run time.
django_stubs_ext.monkeypatch()

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str) -> list[str]:
    return [part.strip() for part in os.environ.get(name, default).split(",") if part.strip()]


DEBUG = env_bool("DEBUG", True)

SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off.")
    # Only ever used by the embedded development shape (DEBUG on, no SECRET_KEY given).
    SECRET_KEY = "django-insecure-campaign-desk-development-only"

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver" if DEBUG else "")
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
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI served from the project, not a CDN
    "pgtrigger",
    "catalog",
    "campaigns",
    "estimates",
    "ledger",
    "mlflow_api",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
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

STATIC_URL = "static/"
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", BASE_DIR / "staticfiles"))
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

LOGIN_URL = "admin:login"

# --- Security (production shape: DEBUG=0 behind a TLS-terminating proxy) ---
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
if not DEBUG:
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    # The health probe of docker-compose speaks plain HTTP inside the network.
    SECURE_REDIRECT_EXEMPT = [r"^api/v1/health/$"]
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", "31536000"))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", True)
    SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", True)

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
        "rest_framework.authentication.TokenAuthentication",
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
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
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
# One queue, named here so that several deployments (or parallel test workers) can share a Redis.
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("CELERY_TASK_DEFAULT_QUEUE", "celery")
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
    "sweep-stale-reports": {
        "task": "ledger.sweep_stale_reports",
        "schedule": float(os.environ.get("REPORT_SWEEP_SECONDS", "60")),
    },
    "scan-alerts": {
        "task": "ledger.scan_alerts",
        "schedule": float(os.environ.get("ALERT_SCAN_SECONDS", "300")),
    },
}

# Alerts (docs/domain.md §19): a lot ending within this many hours raises one; webhook
# deliveries are retried after ALERT_WEBHOOK_BACKOFF seconds, doubling each time.
ALERT_LOT_HOURS = float(os.environ.get("ALERT_LOT_HOURS", "12"))
ALERT_WEBHOOK_BACKOFF = float(os.environ.get("ALERT_WEBHOOK_BACKOFF", "30"))
ALERT_WEBHOOK_TIMEOUT = float(os.environ.get("ALERT_WEBHOOK_TIMEOUT", "10"))

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

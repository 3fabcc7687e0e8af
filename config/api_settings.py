"""The REST framework (parsers, authentication, permissions, throttles) and drf-spectacular's
schema settings; config/settings.py imports both by name."""

import os

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

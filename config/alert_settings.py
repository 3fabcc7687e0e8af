"""Alerts and their delivery (webhooks, e-mail): config/settings.py imports each setting by name."""

import os

from config.env import env_bool, env_list

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

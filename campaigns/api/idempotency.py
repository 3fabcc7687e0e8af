"""`Idempotency-Key` for every POST under /api/ and /mlflow/: a retry replays the stored answer.

Any POST to /api/ or to the MLflow facade (/mlflow/) that carries an `Idempotency-Key` header is
handled here, before any view, so every app's endpoints get the same behaviour without knowing
about it. This is the project's one replay of stored answers: MLflow's own client sends no key,
and the facade then recognises retries by their content instead (campaigns/services/run_log.py),
never by replaying a body:

* The key belongs to the caller (`user:<id>` for a token or session, `ingest:<id>` for an
  ingest key), so two callers never see each other's answers.
* The first request claims the key by inserting an IdempotencyRecord and runs the view **in
  the same database transaction**; the answer (status, content type, body bytes) is written to
  the record before that transaction commits. Either the effect and its stored answer are both
  committed, or neither is: a crash can never leave an effect without its answer.
* A retry with the same key and the same request (method, path, body bytes) gets the stored
  answer back byte for byte, marked `Idempotent-Replayed: true`; nothing it did stays done
  twice. Authorization is checked again first (docs/domain.md §26): the view runs once more
  in a savepoint that is always rolled back, and when that fresh run answers 401, 403 or 404
  (the caller was demoted, left the team, the key was revoked) the retry gets that refusal,
  not the stored answer. Running the view itself is the only check that is the same as a fresh
  request's for every endpoint, the object-level ones included.
* A secret is never stored: a view whose answer carries one (an issued ingest key) sets
  `response.idempotent_body` (`store_instead`), and that body, without the secret, is what is
  kept and replayed.
* The same key with another request answers 422.
* Concurrent requests with one key: the unique constraint on (principal, key) makes the
  second INSERT wait for the first transaction. When the first commits, the second finds its
  record and replays it (one effect, two identical answers); when the first rolls back (a
  5xx), the second claims the key and runs. The wait is bounded on PostgreSQL by
  IDEMPOTENCY_WAIT_SECONDS (lock_timeout); past it the second answers 409 "in flight".
* Answers that say the request was not processed (401, 403, 429, 5xx) are not kept: the whole
  transaction rolls back, releasing the key for a retry.

Being the front door of /api/, it also refuses a body over DATA_UPLOAD_MAX_MEMORY_SIZE (by its
Content-Length) with a JSON 413 naming the limit, for every method and endpoint, keyed or not.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Callable
from typing import Any, TypeVar

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import DatabaseError, IntegrityError, connection, transaction
from django.http import HttpRequest, HttpResponse, JsonResponse

from campaigns.api.authentication import active_ingest_key
from campaigns.api.bodies import body_exceeds_limit, body_too_large
from campaigns.models import ApiToken, IdempotencyRecord
from campaigns.services import idempotency

log = logging.getLogger(__name__)

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
# Visible ASCII, as an HTTP token would be: uuids, "k-1", ULIDs... and nothing a log or the
# database could choke on.
KEY_PATTERN = re.compile(r"[\x21-\x7e]{1,200}")
# Answers that mean "not processed": keeping them would make a retry fail forever.
NOT_KEPT = frozenset({401, 403, 429})
IN_FLIGHT = "A request with this Idempotency-Key is still in progress; retry it shortly."
PATH_LENGTH = IdempotencyRecord._meta.get_field("path").max_length or 500
KEYED_PREFIXES = ("/api/", "/mlflow/")


def _json(status: int, detail: str, **extra: Any) -> JsonResponse:
    return JsonResponse({"detail": detail, **extra}, status=status)


def principal_of(request: HttpRequest) -> str | None:
    """Who is calling, from the Authorization header or the session; None when nobody valid.

    Mirrors the authentication classes of REST_FRAMEWORK; an invalid credential gives None, and
    the view then answers 401 on its own.
    """
    header = request.META.get("HTTP_AUTHORIZATION", "")
    scheme, _, credential = header.partition(" ")
    credential = credential.strip()
    if scheme.lower() == "bearer" and credential:
        # The same lookup as the view's authentication, made once for both.
        ingest_key = active_ingest_key(request, credential)
        key_id = ingest_key.pk if ingest_key is not None else None
        if key_id is not None or not request.path.startswith("/mlflow/"):
            return f"ingest:{key_id}" if key_id is not None else None
    if scheme.lower() in ("token", "bearer") and credential:
        # MLflow's client sends a user's API token as "Bearer" too (mlflow_api/auth.py).
        user_id = (
            ApiToken.objects.filter(digest=ApiToken.hash(credential), user__is_active=True)
            .values_list("user_id", flat=True)
            .first()
        )
        return f"user:{user_id}" if user_id is not None else None
    if header:
        return None
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        return f"user:{user.pk}"
    return None


# A fresh run of the request answering one of these refuses the replay too (docs/domain.md §26).
REFUSALS = frozenset({401, 403, 404})
STORED_BODY = "idempotent_body"


Answer = TypeVar("Answer", bound=HttpResponse)


def store_instead(response: Answer, body: bytes) -> Answer:
    """Keep `body`, not the answer sent, for replays: the answer holds a secret shown once."""
    setattr(response, STORED_BODY, body)
    return response


class _DryRun(Exception):
    def __init__(self, response: HttpResponse) -> None:
        super().__init__("dry run")
        self.response = response


def _replay(record: IdempotencyRecord) -> HttpResponse:
    response = HttpResponse(
        bytes(record.response_body or b""),
        status=record.status_code or 200,
        content_type=record.content_type or "application/json",
    )
    response[REPLAYED_HEADER] = "true"
    return response


class IdempotencyMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path.startswith("/api/") and body_exceeds_limit(request):
            # Every endpoint alike (DRF views, the metrics fast path, keyed or not): refused
            # before anything reads the body.
            return body_too_large()
        key = request.headers.get(HEADER)
        if key is None or not _keyed_endpoint(request):
            return self.get_response(request)
        if not KEY_PATTERN.fullmatch(key):
            return _json(
                400,
                f"{HEADER} must be 1 to 200 visible ASCII characters, e.g. a uuid4.",
                field=HEADER,
            )
        principal = principal_of(request)
        if principal is None:
            return self.get_response(request)  # the view refuses it (401) and nothing is kept
        try:
            body = request.body
        except RequestDataTooBig:
            return body_too_large()
        # The path is part of the request's identity: the same key sent to another endpoint is
        # another request, not a retry.
        digest = hashlib.sha256(
            (request.method or "").encode() + b" " + request.path.encode() + b"\n" + body
        ).hexdigest()
        return self._once(request, principal, key, digest)

    def _once(self, request: HttpRequest, principal: str, key: str, digest: str) -> HttpResponse:
        """Run the request under its claimed key and keep its response, or replay the kept one."""
        with transaction.atomic():
            outcome = self._claim(request, principal, key, digest)
            if isinstance(outcome, IdempotencyRecord):
                return self._refusal_now(request) or _replay(outcome)
            if outcome is not None:
                return outcome
            response = self.get_response(request)
            if response.status_code >= 500 or response.status_code in NOT_KEPT:
                transaction.set_rollback(True)
                return response
            if response.streaming:
                # Cannot be stored; the effect stays, and the key is released.
                idempotency.release_key(principal=principal, key=key)
                return response
            idempotency.keep_answer(
                principal=principal,
                key=key,
                status_code=response.status_code,
                body=getattr(response, STORED_BODY, None) or response.content,
                content_type=response.get("Content-Type", ""),
            )
            return response

    def _refusal_now(self, request: HttpRequest) -> HttpResponse | None:
        """The refusal a fresh run of this request meets now (401, 403, 404), or None.

        The run happens in a savepoint that is always rolled back (with the on_commit work it
        registered), so nothing it does stays; only its status is looked at."""
        try:
            with transaction.atomic():
                raise _DryRun(self.get_response(request))
        except _DryRun as done:
            response = done.response
        return response if response.status_code in REFUSALS else None

    def _claim(
        self, request: HttpRequest, principal: str, key: str, digest: str
    ) -> HttpResponse | IdempotencyRecord | None:
        """Insert the record (None: this request runs), or the record to replay, or the
        answer (409 in flight, 422 another request)."""
        try:
            with transaction.atomic():
                previous = _limit_lock_wait()
                idempotency.claim_key(
                    principal=principal,
                    key=key,
                    method=request.method or "POST",
                    path=request.path[:PATH_LENGTH],
                    body_digest=digest,
                )
                _restore_lock_wait(previous)
            return None
        except IntegrityError:
            pass
        except DatabaseError as exc:
            if not _is_lock_wait(exc):
                raise
            # The first request with this key is still running after the bounded wait.
            log.info("idempotency key %s of %s still in flight: %s", key, principal, exc)
            return _json(409, IN_FLIGHT)
        record = IdempotencyRecord.objects.filter(principal=principal, key=key).first()
        if record is None or record.status_code is None:
            return _json(409, IN_FLIGHT)
        if record.body_digest != digest:
            return _json(
                422,
                f"This {HEADER} was already used for another request "
                f"({record.method} {record.path}, another body); use a new key.",
            )
        return record


def _limit_lock_wait() -> str | None:
    """On PostgreSQL, bound how long a second INSERT waits for the first request's transaction;
    return the previous lock_timeout (None elsewhere).

    `set_config(..., true)` is SET LOCAL: a failed INSERT rolls it back with its savepoint, and
    `_restore_lock_wait` puts the previous value back after a successful one, so the view itself
    runs with the server's own setting.
    """
    if connection.vendor != "postgresql":
        return None
    seconds = float(getattr(settings, "IDEMPOTENCY_WAIT_SECONDS", 10))
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT current_setting('lock_timeout'), set_config('lock_timeout', %s, true)",
            [f"{int(seconds * 1000)}ms"],
        )
        return str(cursor.fetchone()[0])


def _restore_lock_wait(previous: str | None) -> None:
    if previous is not None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT set_config('lock_timeout', %s, true)", [previous])


def _is_lock_wait(exc: DatabaseError) -> bool:
    cause = exc.__cause__
    sqlstate = getattr(cause, "sqlstate", None) or getattr(cause, "pgcode", None)
    # 55P03: lock_not_available (PostgreSQL); SQLite says "database is locked".
    return sqlstate == "55P03" or "database is locked" in str(exc)


def _keyed_endpoint(request: HttpRequest) -> bool:
    """A POST to an endpoint that honours the key; a path with NUL is no endpoint (404) and
    cannot be stored as text."""
    return (
        request.method == "POST"
        and request.path.startswith(KEYED_PREFIXES)
        and "\x00" not in request.path
    )

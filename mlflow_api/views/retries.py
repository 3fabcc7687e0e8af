"""Harmless retries: MLflow's client retries POSTs on 429/5xx and sends no idempotency key.

Each POST that names a run (or, for runs/create and logged-models, the caller) is compared with
the previous accepted POST of that scope: the same method, path and body within
IDEMPOTENCY_RETENTION_HOURS is answered from the stored response and records nothing again.
The scope's record row is locked for the request, so a retry racing its original waits for it
and then replays it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import orjson
from django.conf import settings
from django.db import IntegrityError, transaction
from django.http import HttpRequest, HttpResponse
from django.utils import timezone

from campaigns.models import (
    IdempotencyRecord,
    Run,
)
from mlflow_api.auth import Caller
from mlflow_api.errors import MlflowError
from mlflow_api.views.lookups import (
    run_of,
)
from mlflow_api.views.wire import (
    JSON,
    PREVIOUS,
    error_answer,
    read_body,
)


def _locked_record(scope: str, request: HttpRequest) -> IdempotencyRecord:
    """The scope's record of its previous accepted POST, locked for this request (created
    empty the first time; a concurrent creator waits on the unique index, then locks it)."""
    record = IdempotencyRecord.objects.select_for_update().filter(principal=scope, key=PREVIOUS)
    found = record.first()
    if found is not None:
        return found
    try:
        with transaction.atomic():
            return IdempotencyRecord.objects.create(
                principal=scope,
                key=PREVIOUS,
                method=request.method or "POST",
                path=request.path[:500],
                body_digest="",
            )
    except IntegrityError:
        return record.get()


def once(request: HttpRequest, scope: str, work: Callable[[], Any]) -> HttpResponse:
    """Run `work` (all or nothing) unless this POST repeats the scope's previous accepted one."""
    digest = hashlib.sha256(
        f"{request.method} {request.path}\n".encode() + request.body
    ).hexdigest()
    cutoff = timezone.now() - timedelta(hours=settings.IDEMPOTENCY_RETENTION_HOURS)
    with transaction.atomic():
        record = _locked_record(scope, request)
        if (
            record.body_digest == digest
            and record.status_code is not None
            and record.created_at >= cutoff
        ):
            response = HttpResponse(
                bytes(record.response_body or b""),
                status=record.status_code,
                content_type=record.content_type or JSON,
            )
            response["Idempotent-Replayed"] = "true"
            return response
        try:
            # No savepoint (two round trips saved per call): a refusal rolls the whole
            # transaction back on the way out, the record's previous answer included.
            with transaction.atomic(savepoint=False):
                body = work()
        except MlflowError as exc:
            return error_answer(exc)
        content = orjson.dumps(body)
        IdempotencyRecord.objects.filter(pk=record.pk).update(
            method=request.method or "POST",
            path=request.path[:500],
            body_digest=digest,
            status_code=200,
            response_body=content,
            content_type=JSON,
            created_at=timezone.now(),
        )
    return HttpResponse(content, status=200, content_type=JSON)


def run_post(
    request: HttpRequest, caller: Caller, work: Callable[[Run, dict[str, Any]], Any]
) -> HttpResponse:
    data = read_body(request)
    run = run_of(caller, data)
    caller.require_write(run.team_id)
    return once(request, f"mlflow-run:{run.pk}", lambda: work(run, data))

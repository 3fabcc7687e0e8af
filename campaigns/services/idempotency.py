"""The Idempotency-Key records' writes (campaigns/api/idempotency.py keeps the HTTP side): a
key claimed for a request, its answer kept for replay, released when it cannot be kept, and the
expired ones purged (docs/domain.md §26).

They run inside the caller's transaction, not one of their own: the middleware holds the
request's transaction (and a savepoint around the claim, for its lock wait), and one more
savepoint per keyed request would be a statement on the ingest path for nothing.
"""

from __future__ import annotations

from datetime import datetime

from campaigns.models import IdempotencyRecord


def claim_key(*, principal: str, key: str, method: str, path: str, body_digest: str) -> None:
    """Claim `key` for this request; IntegrityError when the principal already holds it."""
    IdempotencyRecord.objects.create(
        principal=principal, key=key, method=method, path=path, body_digest=body_digest
    )


def keep_answer(
    *, principal: str, key: str, status_code: int, body: bytes, content_type: str
) -> None:
    """Keep the answer the claimed request gave, for its retries to replay."""
    IdempotencyRecord.objects.filter(principal=principal, key=key).update(
        status_code=status_code, response_body=body, content_type=content_type
    )


def release_key(*, principal: str, key: str) -> None:
    """Forget the claim (an answer that cannot be stored, such as a stream)."""
    IdempotencyRecord.objects.filter(principal=principal, key=key).delete()


def purge_expired(*, older_than: datetime) -> int:
    """Forget the records created before `older_than`; how many."""
    deleted, _ = IdempotencyRecord.objects.filter(created_at__lt=older_than).delete()
    return deleted

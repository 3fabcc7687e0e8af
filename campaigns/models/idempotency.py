"""Stored answers of idempotent requests (one implementation for REST and MLflow)."""

from __future__ import annotations

from django.db import models


class IdempotencyRecord(models.Model):
    """The stored response of a POST sent with an Idempotency-Key, replayed on a retry."""

    principal = models.CharField(max_length=80)
    key = models.CharField(max_length=200)
    method = models.CharField(max_length=10)
    path = models.CharField(max_length=500)
    body_digest = models.CharField(max_length=64)
    status_code = models.PositiveSmallIntegerField(null=True)
    response_body = models.BinaryField(null=True)
    content_type = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["principal", "key"], name="idempotency_key_unique")
        ]

    def __str__(self) -> str:
        return f"{self.method} {self.path} ({self.key})"

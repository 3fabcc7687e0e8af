from datetime import timedelta

from django.test import TestCase, override_settings
from django.utils import timezone

from campaigns.models import IdempotencyRecord
from campaigns.tasks import purge_idempotency_records
from config.celery import app


def record(key: str, hours_ago: float) -> IdempotencyRecord:
    rec = IdempotencyRecord.objects.create(
        principal="user:1",
        key=key,
        method="POST",
        path="/api/v1/x/",
        body_digest="d" * 64,
        status_code=201,
        response_body=b"{}",
        content_type="application/json",
    )
    # auto_now_add ignores a given value: age the row afterwards.
    IdempotencyRecord.objects.filter(pk=rec.pk).update(
        created_at=timezone.now() - timedelta(hours=hours_ago)
    )
    return rec


class PurgeIdempotencyRecordsTests(TestCase):
    @override_settings(IDEMPOTENCY_RETENTION_HOURS=24)
    def test_it_forgets_only_the_responses_older_than_the_retention(self) -> None:
        record("old", hours_ago=30)
        record("fresh", hours_ago=2)
        self.assertEqual(purge_idempotency_records(), 1)
        self.assertEqual(list(IdempotencyRecord.objects.values_list("key", flat=True)), ["fresh"])
        self.assertEqual(purge_idempotency_records(), 0)

    def test_beat_runs_the_purge_every_hour(self) -> None:
        entry = app.conf.beat_schedule["purge-idempotency-records"]
        self.assertEqual(entry["task"], purge_idempotency_records.name)
        self.assertEqual(entry["schedule"], 3600.0)

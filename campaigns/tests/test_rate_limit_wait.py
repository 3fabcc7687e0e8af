"""`rate_limit_wait`: the API's throttle for the MLflow facade, sharing the API's buckets."""

from __future__ import annotations

from django.test import override_settings

from campaigns.api.throttles import rate_limit_wait
from campaigns.tests.factories import clear_cache

RATES = {"ingest_key": "3/min", "user": "2/min"}


def test_it_counts_in_the_apis_bucket_under_the_apis_setting_names() -> None:
    clear_cache()  # this worker's keys only, not the whole shared Redis database
    with override_settings(REST_FRAMEWORK={"DEFAULT_THROTTLE_RATES": RATES}):
        assert [rate_limit_wait(ingest_key_id=7) for _ in range(3)] == [None] * 3
        wait = rate_limit_wait(ingest_key_id=7)
        assert wait is not None and 0 < wait <= 60
        assert rate_limit_wait(ingest_key_id=8) is None  # each key its own bucket
        assert rate_limit_wait(user_id=1) is None and rate_limit_wait(user_id=1) is None
        assert rate_limit_wait(user_id=1) is not None

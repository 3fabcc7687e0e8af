"""Benchmark of hardware options: a 200-item campaign over the whole GPU catalog.

Run from the project root:

    .venv/bin/python bench/estimates/hardware_options.py [--items 200] [--repeat 5]

Builds the committed campaign of bench/estimates/run.py (items on RTX 4090s, pilots for 40%,
finished runs for 10%) in a throwaway test database (SQLite in memory, or `test_<name>` on the
server of DATABASE_URL), lands its forecast, then times:

1. ``estimates.domain.hardware_options.rank_options`` alone (pure: every item on every catalog GPU,
lots for
   the GPUs with rental plans);
2. ``campaign_hardware_options`` (reads the persisted forecast, the items and the catalog);
3. ``GET /api/v1/campaigns/{id}/hardware-options/`` through the test client.

Target: under 1 s for 200 items over the whole catalog (issue 11).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "bench" / "estimates"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# A bench measures a local checkout as runserver serves it: DEBUG on (static files from the
# apps, no redirect to HTTPS), as it was before DEBUG became off by default.
os.environ.setdefault("DEBUG", "1")
os.environ["CELERY_TASK_ALWAYS_EAGER"] = "1"
os.environ.setdefault("LOG_LEVEL", "WARNING")


def timed(fn: Any, repeat: int) -> tuple[list[float], Any]:
    result = fn()
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return times, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args()

    import django

    django.setup()
    from django.db import connection

    from bench.databases import throwaway_test_database

    with throwaway_test_database(connection):
        rows = run(args.items, args.seed, args.repeat)
        vendor = connection.vendor
    print(f"Hardware options ({vendor}; Python {platform.python_version()})")
    print(f"{'benchmark':<44} {'median s':>9} {'min s':>8}  detail")
    for name, times, detail in rows:
        print(f"{name:<44} {statistics.median(times):>9.4f} {min(times):>8.4f}  {detail}")


def run(n_items: int, seed: int, repeat: int) -> list[tuple[str, list[float], str]]:
    from django.contrib.auth import get_user_model
    from rest_framework.test import APIClient
    from run import build_campaign  # bench/estimates/run.py

    from campaigns.models import Membership
    from catalog.models import GpuModel, RentalPlan
    from estimates import forecasts, services
    from estimates.domain import hardware_options as options
    from estimates.models import plan_offer
    from estimates.selectors.hardware_options import campaign_hardware_options, campaign_works

    campaign = build_campaign(n_items, seed)
    version = services.mark_stale(campaign) or 0
    forecasts.land_forecast(campaign.pk, version, forecasts.compute_forecast(campaign))
    found = campaign_works(campaign)
    gpus = [g.as_spec() for g in GpuModel.objects.all()]
    offers = [plan_offer(p) for p in RentalPlan.objects.select_related("gpu")]

    def pure() -> Any:
        return options.rank_options(
            found.works,
            gpus,
            offers=offers,
            window_hours=float(campaign.window_hours),
            measured_on=found.measured_on,
            calendar=found.calendar,
        )

    rows = []
    times, (ranked, excluded) = timed(pure, repeat)
    rows.append(
        (
            "rank_options (pure)",
            times,
            f"{len(found.works)} items x {len(gpus)} GPUs: {len(ranked)} options, "
            f"{len(excluded)} excluded; first {ranked[0].gpu} {ranked[0].total_cost}",
        )
    )
    times, _ = timed(lambda: campaign_hardware_options(campaign), repeat)
    rows.append(("campaign_hardware_options (DB reads + rank)", times, ""))

    user = get_user_model().objects.create_user("bench-options")
    Membership.objects.create(user=user, team=campaign.team, role="viewer")
    client = APIClient()
    client.force_authenticate(user)
    url = f"/api/v1/campaigns/{campaign.pk}/hardware-options/"

    def get() -> Any:
        answer = client.get(url)
        assert answer.status_code == 200, answer.content
        return answer

    times, _ = timed(get, repeat)
    rows.append((f"GET {url}", times, "through the test client"))
    return rows


if __name__ == "__main__":
    main()

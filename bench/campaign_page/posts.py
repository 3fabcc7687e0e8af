"""Benchmark: one GET and refused POSTs of the campaign admin page, as a planner posts it.

Run from the project root: ``.venv/bin/python bench/campaign_page/posts.py [--repeat 5]``.

Plans a small draft and a small committed campaign (tests/test_admin_boundaries.py's: a
baseline, a variant, a stop rule, a stage; the committed one a decision point), then, through
Django's test client as the team's owner, measures for each: the GET of
``/admin/campaigns/campaign/<id>/change/``, a POST its form refuses (a negative planned
hours: the form's own validation) and a POST a service refuses (the page is built a second
time with the refusal beside its field, campaigns/admin/refusals.py). Each is measured
``--repeat`` times after one warm-up, inside a rolled-back transaction as the boundary test
posts it: the median time, the SQL queries and how many times an inline's formset class was
built (``InlineModelAdmin.get_formset``). The database ``cd_bench_posts`` (``--db``) is
recreated and dropped at the end unless ``--keep-db``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))

from bench.campaign_page.run import setup_django  # noqa: E402
from bench.databases import db_url, drop_database, recreate_database  # noqa: E402


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--admin-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    p.add_argument("--db", default="cd_bench_posts", help="database to (re)create")
    p.add_argument("--keep-db", action="store_true", help="keep the database afterwards")
    p.add_argument("--repeat", type=int, default=5)
    return p.parse_args()


def counting_get_formset() -> list[int]:
    """Count the inline formset classes built (the patch lives for the process)."""
    from django.contrib.admin.options import InlineModelAdmin

    built = [0]
    original = InlineModelAdmin.get_formset

    def get_formset(self: Any, *args: Any, **kwargs: Any) -> Any:
        built[0] += 1
        return original(self, *args, **kwargs)

    InlineModelAdmin.get_formset = get_formset  # type: ignore[method-assign]
    return built


def measure(client: Any, call: Any, repeat: int, built: list[int]) -> dict[str, Any]:
    from django.db import connection, transaction
    from django.test.utils import CaptureQueriesContext

    def once() -> tuple[float, int, int, Any]:
        before = built[0]
        with transaction.atomic(), CaptureQueriesContext(connection) as captured:
            t0 = time.perf_counter()
            answer = call()
            seconds = time.perf_counter() - t0
            transaction.set_rollback(True)
        return seconds, len(captured), built[0] - before, answer

    once()  # warm-up: caches, template loading
    runs = [once() for _ in range(repeat)]
    answer = runs[-1][3]
    return {
        "median_s": statistics.median(r[0] for r in runs),
        "queries": runs[-1][1],
        "formsets_built": runs[-1][2],
        "status": answer.status_code,
        "refused": answer.status_code == 200 and b"errorlist" in answer.content,
        # Only the second pass over a post a service refused says so (campaigns/admin/refusals.py).
        "second_pass": b"Nothing was saved" in answer.content,
    }


def pages(team: Any, owner: Any) -> dict[str, tuple[int, dict[str, str], dict[str, str]]]:
    """Each campaign's id, a post its form refuses and one a service refuses."""
    from campaigns.models import DecisionPoint
    from campaigns.services.plans import commit_plan
    from campaigns.tests.factories import make_plannable

    draft = make_plannable(team, title="Draft plan")
    committed = make_plannable(team, title="Committed plan")
    DecisionPoint.objects.create(campaign=committed, label="after the pilot")
    commit_plan(campaign=committed, acting_user=owner)
    return {
        "draft": (
            draft.pk,
            {"stages-0-planned_hours": "-1"},
            {"items-0-planned_hours": "-3"},
        ),
        "committed": (
            committed.pk,
            {"stages-0-observed_hours": "-3"},
            {"items-0-planned_hours": "-3", "items-0-amendment_reason": "a pilot"},
        ),
    }


def main() -> int:
    args = parse_args()
    recreate_database(args.admin_url, args.db)
    try:
        setup_django(db_url(args.admin_url, args.db))
        from django.conf import settings
        from django.core.management import call_command
        from django.test import Client

        from campaigns.models import Team
        from campaigns.tests.factories import make_user
        from tests.adminforms import form_data

        if "testserver" not in settings.ALLOWED_HOSTS and "*" not in settings.ALLOWED_HOSTS:
            settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
        call_command("migrate", verbosity=0)
        team = Team.objects.create(name="nlp")
        owner = make_user("olga", team=team, role="owner")
        client = Client()
        client.force_login(owner)
        built = counting_get_formset()
        rows = []
        for state, (pk, by_form, by_service) in pages(team, owner).items():
            url = f"/admin/campaigns/campaign/{pk}/change/"
            data = form_data(client.get(url).content.decode(), "campaign_form")
            posts = {"refused by the form": by_form, "refused by a service": by_service}
            rows.append(
                (state, "GET", measure(client, lambda u=url: client.get(u), args.repeat, built))
            )
            for what, posted in posts.items():
                post = lambda u=url, d={**data, **posted}: client.post(u, d)  # noqa: E731
                rows.append((state, f"POST {what}", measure(client, post, args.repeat, built)))
    finally:
        if not args.keep_db:
            from django.db import connections

            connections.close_all()
            drop_database(args.admin_url, args.db)
    print(
        f"{'campaign':<11}{'request':<28}{'median':>9}{'queries':>9}{'formsets':>10}  second pass"
    )
    for state, what, r in rows:
        assert r["refused"] == (what != "GET"), (state, what, r)
        print(
            f"{state:<11}{what:<28}{r['median_s'] * 1000:>7.0f}ms{r['queries']:>9}"
            f"{r['formsets_built']:>10}  {'yes' if r['second_pass'] else 'no'}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

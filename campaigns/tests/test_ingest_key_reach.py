"""An ingest key reaches only the ingest paths (issue 19, Low; docs/api.md): every other route
under /api/ (the schema and the docs included) answers it 403 with one clear message, walked
from the URL configuration itself so a new endpoint is covered the day it is added. The key's
own runs, its campaign's runs/ POST and /mlflow/ keep working."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from django.test import TestCase
from django.urls import URLPattern, URLResolver, get_resolver

from campaigns.api.permissions import INGEST_ONLY
from campaigns.models import Team
from campaigns.services import ingest
from campaigns.tests.factories import (
    as_key,
    clear_cache,
    committed_campaign,
    ingest_key,
    make_user,
    points,
    post,
)

# Anonymous by design (up/down for a load balancer): nothing to refuse.
OPEN = {"api/v1/health/"}
OBJECT_ID = "<int:pk>"
METHODS = ("get", "post", "patch", "put", "delete")


def _routes(patterns: list[Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _routes(pattern.url_patterns, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern):
            view = getattr(pattern.callback, "cls", None) or getattr(
                pattern.callback, "view_class", None
            )
            yield prefix + str(pattern.pattern), view


def _allowed(view: Any, method: str) -> bool:
    if not getattr(view, "allow_ingest", False):
        return False
    methods = getattr(view, "ingest_methods", None)
    return methods is None or method.upper() in methods


class AnIngestKeyReachesOnlyTheIngestPaths(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        team = Team.objects.create(name="nlp")
        owner = make_user("olga", team=team, role="owner")
        cls.campaign = committed_campaign(team, owner, lots=0, automatic_rules=True)
        cls.raw = ingest_key(cls.campaign, owner)
        ingest.open_run(cls.campaign, run_id="r-1", variant=cls.campaign.items.get(name="baseline"))

    def setUp(self) -> None:
        clear_cache()
        self.key = as_key(self.raw)

    def url(self, route: str) -> str:
        own = str(self.campaign.pk)
        filled = re.sub(r"<int:(id|campaign_id)>", own, route)
        filled = re.sub(r"<run_id:run_id>", "r-1", filled)
        return "/" + re.sub(r"<int:\w+>", "1", filled)

    def test_every_other_route_answers_the_key_403_naming_what_it_may_reach(self) -> None:
        checked, wrong = 0, []
        for route, view in _routes(get_resolver().url_patterns):
            if not route.startswith("api/") or route in OPEN:
                continue
            for method in METHODS:
                if _allowed(view, method):
                    continue
                answer = self.key.generic(
                    method.upper(), self.url(route), b"{}", content_type="application/json"
                )
                checked += 1
                # The schema view answers in its own format (YAML, folded): look for the words.
                words = " ".join(answer.content.decode(errors="replace").split()).replace("''", "'")
                refused = answer.status_code == 403 and INGEST_ONLY in words
                # A route naming an object by its own id (reports/1/) finds none of the key's:
                # 404, as another campaign's object is for any caller.
                if not refused and not (answer.status_code == 404 and OBJECT_ID in route):
                    wrong.append(f"{method.upper()} {route}: {answer.status_code}")
        self.assertGreater(checked, 150)
        self.maxDiff = None
        self.assertEqual(wrong, [])

    def test_the_schema_and_the_docs_are_refused(self) -> None:
        for url in ("/api/v1/schema/", "/api/v1/docs/"):
            answer = self.key.get(url)
            self.assertEqual(answer.status_code, 403, url)
            self.assertIn("the schema, the docs", " ".join(answer.content.decode().split()))
        self.assertEqual(self.key.get("/api/v1/docs/").json()["detail"], INGEST_ONLY)

    def test_the_clients_calls_and_mlflows_still_work(self) -> None:
        self.assertEqual(self.key.get("/api/v1/runs/r-1/").status_code, 200)
        self.assertEqual(
            post(self.key, "/api/v1/runs/r-1/metrics/", points(("loss", 1, 0.5))).status_code, 201
        )
        opened = post(self.key, f"/api/v1/campaigns/{self.campaign.pk}/runs/", {"run_id": "r-2"})
        self.assertEqual(opened.status_code, 201)
        mlflow = self.key.get("/mlflow/api/2.0/mlflow/runs/get?run_id=r-1")
        self.assertEqual(mlflow.status_code, 200)
        self.assertEqual(json.loads(mlflow.content)["run"]["info"]["run_id"], "r-1")

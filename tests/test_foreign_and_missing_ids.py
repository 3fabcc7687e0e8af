"""Another team's id and a missing id get one answer (issue 19, Low: "other teams' item ids can
be told from missing ones by the error text"), on every REST endpoint that takes an id in its
path or its body: items, campaigns, runs, stages, stop rules, lots, keys, checkpoints,
deliverables, ledger entries, teams. The walk sends each request twice, once naming
team "vision"'s object and once an id that exists nowhere, and wants the same status and the
same body (the id itself aside). Each request runs in a savepoint rolled back after it."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.test import TestCase

from campaigns.models import Checkpoint, LotReservation, Team
from campaigns.services import ingest
from campaigns.services.keys import issue_ingest_key
from campaigns.tests.factories import (
    as_user,
    clear_cache,
    committed_campaign,
    make_plannable,
    make_user,
)
from ledger.models import Deliverable
from ledger.services import post_entry

MISSING = 987_654_321
MISSING_RUN = "no-such-run-anywhere"
CAMPAIGN_CHILDREN = [
    "",
    "commit/",
    "close/",
    "variants/",
    "stop-rules/",
    "decisions/",
    "stages/",
    "runs/",
    "ingest-keys/",
    "lots/",
    "hardware-options/",
    "forecast/",
    "ledger/",
    "ledger/summary/",
    "clone/",
    "alerts/",
    "spend/",
    "deliverables/",
    "reports/",
]
RUN_ACTIONS = ["", "metrics/", "throughput/", "checkpoints/", "stop/", "finish/"]


class AnotherTeamsIdReadsAsAMissingOne(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        nlp = Team.objects.create(name="nlp")
        cls.olga = make_user("olga", team=nlp, role="owner")
        cls.mine = committed_campaign(nlp, cls.olga, lots=1, automatic_rules=True)
        cls.my_draft = make_plannable(nlp, title="my draft")
        ingest.open_run(cls.mine, run_id="mine-1", variant=cls.mine.items.get(name="baseline"))
        vision = Team.objects.create(name="vision")
        sam = make_user("sam", team=vision, role="owner")
        theirs = committed_campaign(vision, sam, lots=1, automatic_rules=True)
        cls.their_team = vision
        cls.theirs = theirs
        item = theirs.items.get(name="baseline")
        run, _ = ingest.open_run(theirs, run_id="theirs-1", variant=item)
        checkpoint = Checkpoint.objects.create(run=run, step=1, components=["model"])
        cls.ids = {
            "item": item.pk,
            "stage": theirs.stages.first().pk,
            "rule": theirs.stop_rules.first().pk,
            "lot": LotReservation.objects.filter(campaign=theirs).first().pk,
            "key": issue_ingest_key(campaign=theirs, acting_user=sam)[0].pk,
            "checkpoint": checkpoint.pk,
            "entry": post_entry(
                campaign=theirs,
                kind="external",
                description="x",
                amount=Decimal("1"),
                currency="USD",
            ).pk,
            "deliverable": Deliverable.objects.create(
                campaign=theirs, kind="model", corpus_name="c", corpus_revision="r", run=run
            ).pk,
        }

    def setUp(self) -> None:
        clear_cache()
        self.olga_client = as_user(self.olga)
        self.differences: list[str] = []
        self.checked = 0

    def answer(self, method: str, url: str, body: Any, name: str) -> tuple[int, str]:
        with transaction.atomic():
            raw = b"" if body is None else json.dumps(body).encode()
            response = self.olga_client.generic(method, url, raw, content_type="application/json")
            transaction.set_rollback(True)
        return response.status_code, response.content.decode(errors="replace").replace(name, "ID")

    def compare(self, method: str, template: str, body: Any, foreign: Any, missing: Any) -> None:
        """`template` and `body` hold "{X}" where the id goes (a string, or the int itself)."""

        def fill(value: Any, x: Any) -> Any:
            if value == "{X}":
                return x
            if isinstance(value, str):
                return value.replace("{X}", str(x))
            if isinstance(value, list):
                return [fill(v, x) for v in value]
            if isinstance(value, dict):
                return {k: fill(v, x) for k, v in value.items()}
            return value

        seen = [
            self.answer(method, fill(template, x), fill(body, x), str(x))
            for x in (foreign, missing)
        ]
        self.checked += 1
        if seen[0] != seen[1]:
            self.differences.append(f"{method} {template} {body}: {seen[0]} vs {seen[1]}")

    def test_path_ids_of_another_team(self) -> None:
        mine, theirs = self.mine.pk, self.theirs.pk
        for child in CAMPAIGN_CHILDREN:
            for method in ("GET", "POST", "PATCH", "DELETE"):
                self.compare(method, f"/api/v1/campaigns/{{X}}/{child}", {}, theirs, MISSING)
        for tail in ("", "calibration/", "ledger/export", "budget/"):
            for method in ("GET", "PATCH"):
                self.compare(method, f"/api/v1/teams/{{X}}/{tail}", {}, self.their_team.pk, MISSING)
        for action in RUN_ACTIONS:
            for method in ("GET", "POST"):
                self.compare(method, f"/api/v1/runs/{{X}}/{action}", {}, "theirs-1", MISSING_RUN)
        for child, name in [
            ("variants", "item"),
            ("stages", "stage"),
            ("stop-rules", "rule"),
            ("lots", "lot"),
            ("ingest-keys", "key"),
            ("deliverables", "deliverable"),
            ("ledger", "entry"),
        ]:
            for method in ("GET", "PATCH", "DELETE"):
                url = f"/api/v1/campaigns/{mine}/{child}/{{X}}/"
                self.compare(method, url, {}, self.ids[name], MISSING)
        self.compare(
            "POST",
            f"/api/v1/campaigns/{mine}/stages/{{X}}/observed/",
            {"observed_hours": "1"},
            self.ids["stage"],
            MISSING,
        )
        self.compare(
            "POST",
            "/api/v1/runs/mine-1/checkpoints/{X}/retrieved/",
            {},
            self.ids["checkpoint"],
            MISSING,
        )
        self.assertGreater(self.checked, 100)
        self.assertEqual(self.differences, [])

    def test_body_ids_of_another_team(self) -> None:
        mine, draft = self.mine.pk, self.my_draft.pk
        item, stage, rule = self.ids["item"], self.ids["stage"], self.ids["rule"]
        cases: list[tuple[str, str, Any, Any, Any]] = [
            ("POST", f"/api/v1/campaigns/{mine}/ingest-keys/", {"item": "{X}"}, item, MISSING),
            (
                "POST",
                f"/api/v1/campaigns/{mine}/runs/",
                {"run_id": "n-1", "variant": "{X}"},
                item,
                MISSING,
            ),
            (
                "POST",
                f"/api/v1/campaigns/{draft}/stages/",
                {"name": "s", "kind": "setup", "machine": False, "variant": "{X}"},
                item,
                MISSING,
            ),
            (
                "POST",
                f"/api/v1/campaigns/{draft}/stages/",
                {"name": "s", "kind": "setup", "machine": False, "depends_on": ["{X}"]},
                stage,
                MISSING,
            ),
            (
                "POST",
                f"/api/v1/campaigns/{mine}/decisions/",
                {"outcome": "cut", "rationale": "r", "cut_variants": ["{X}"]},
                item,
                MISSING,
            ),
            ("POST", "/api/v1/runs/mine-1/stop/", {"rule": "{X}", "reason": "r"}, rule, MISSING),
            (
                "POST",
                "/api/v1/campaigns/",
                {
                    "team": "{X}",
                    "title": "t",
                    "question": "q",
                    "corpus": {"name": "c", "revision": "r"},
                    "window_hours": "1",
                    "budget": "1",
                    "currency": "USD",
                },
                self.their_team.pk,
                MISSING,
            ),
            (
                "POST",
                f"/api/v1/campaigns/{mine}/deliverables/",
                {
                    "kind": "model",
                    "corpus": {"name": "c", "revision": "r"},
                    "run": "{X}",
                    "files": [{"path": "m.bin", "size_bytes": 1, "sha256": "0" * 64}],
                },
                "theirs-1",
                MISSING_RUN,
            ),
            (
                "PATCH",
                f"/api/v1/campaigns/{mine}/lots/{{X}}/",
                {"quantity": 2},
                self.ids["lot"],
                MISSING,
            ),
        ]
        for method, url, body, foreign, missing in cases:
            self.compare(method, url, body, foreign, missing)
        self.assertEqual(self.differences, [])

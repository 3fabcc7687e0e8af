"""API inputs that a client computes or chooses: hours are measurements (rounded, bounded, never
a 500), money is exact, identifiers are taken as sent or refused, bodies are bounded (the
README's "Limits"), and an ingest key meets other campaigns as not found (docs/api.md)."""

from __future__ import annotations

from decimal import Decimal

from django.test import TestCase, override_settings

from campaigns.api.fields import HOURS_MAX
from campaigns.models import Campaign, PlannedItem, Run, Stage, Team
from campaigns.tests.factories import (
    as_key,
    as_user,
    committed_campaign,
    ingest_key,
    make_campaign,
    make_user,
    post,
)


class HoursAreMeasurements(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.owner = make_user("olga", team=cls.team, role="owner")
        cls.campaign = committed_campaign(cls.team, cls.owner, lots=0, automatic_rules=True)
        cls.stage = Stage.objects.get(campaign=cls.campaign)
        cls.draft = make_campaign(cls.team, title="a draft")
        cls.raw_key = ingest_key(cls.campaign, cls.owner)

    def setUp(self) -> None:
        self.desk = as_user(self.owner)
        self.loop = as_key(self.raw_key)
        self.observed = f"/api/v1/campaigns/{self.campaign.pk}/stages/{self.stage.pk}/observed/"

    def finish(self, hours: object) -> object:
        post(self.loop, f"/api/v1/campaigns/{self.campaign.pk}/runs/", {"run_id": "pilot-1"})
        return post(
            self.loop,
            "/api/v1/runs/pilot-1/finish/",
            {"status": "completed", "observed_hours": hours},
        )

    def test_it_rounds_elapsed_seconds_over_3600_half_up_to_the_hundredth(self) -> None:
        answer = self.finish(2800 / 3600)  # 0.7777777777777778
        self.assertEqual(answer.status_code, 200, answer.content)  # type: ignore[attr-defined]
        run = Run.objects.get(run_id="pilot-1")
        self.assertEqual((run.status, run.observed_hours), ("completed", Decimal("0.78")))

    def test_it_rounds_a_half_hundredth_up_and_takes_decimal_strings(self) -> None:
        self.assertEqual(self.finish("1.005").status_code, 200)  # type: ignore[attr-defined]
        self.assertEqual(Run.objects.get().observed_hours, Decimal("1.01"))

    def test_it_refuses_hours_above_the_maximum_negative_or_not_numbers_naming_the_field(
        self,
    ) -> None:
        for hours in [100000.01, -0.5, "1e30", "NaN", True, "12 h", [1]]:
            with self.subTest(hours=hours):
                answer = self.finish(hours)
                self.assertEqual(answer.status_code, 400, answer.content)  # type: ignore[attr-defined]
                self.assertIn("observed_hours", answer.json())  # type: ignore[attr-defined]
        self.assertEqual(Run.objects.get().status, "running")

    def test_a_negative_number_of_hours_is_refused_with_the_limit_as_number_or_string(
        self,
    ) -> None:
        for hours in [-5, "-5", "-0.5"]:
            with self.subTest(hours=hours):
                answer = self.finish(hours)
                self.assertEqual(answer.status_code, 400, answer.content)  # type: ignore[attr-defined]
                self.assertEqual(
                    answer.json()["observed_hours"],  # type: ignore[attr-defined]
                    ["Ensure this value is greater than or equal to 0."],
                )

    def test_the_maximum_itself_is_taken(self) -> None:
        self.assertEqual(self.finish(float(HOURS_MAX)).status_code, 200)  # type: ignore[attr-defined]

    def test_huge_observed_hours_are_a_400_naming_the_field_not_a_500(self) -> None:
        for raw in [b'{"observed_hours": "1e30"}', b'{"observed_hours": 1e27}']:
            with self.subTest(raw=raw):
                answer = self.desk.post(self.observed, data=raw, content_type="application/json")
                self.assertEqual(answer.status_code, 400, answer.content)
                self.assertIn("observed_hours", answer.json())
        self.stage.refresh_from_db()
        self.assertIsNone(self.stage.observed_hours)

    def test_observed_hours_of_a_stage_are_rounded_too(self) -> None:
        answer = post(self.desk, self.observed, {"observed_hours": 22.004999})
        self.assertEqual(answer.status_code, 200, answer.content)
        self.assertEqual(answer.json()["observed_hours"], "22.00")

    def test_planned_prep_and_window_hours_are_rounded_and_bounded(self) -> None:
        items = f"/api/v1/campaigns/{self.draft.pk}/variants/"
        answer = post(
            self.desk,
            items,
            {
                "name": "v",
                "role": "variant",
                "tier": "useful",
                "planned_hours": 1 / 3,
                "prep_hours": "2.345",
            },
        )
        self.assertEqual(answer.status_code, 201, answer.content)
        item = PlannedItem.objects.get(campaign=self.draft, name="v")
        self.assertEqual((item.planned_hours, item.prep_hours), (Decimal("0.33"), Decimal("2.35")))
        stages = f"/api/v1/campaigns/{self.draft.pk}/stages/"
        answer = post(
            self.desk,
            stages,
            {"name": "s", "kind": "training", "resource": "gpu-a", "planned_hours": 1e27},
        )
        self.assertEqual(answer.status_code, 400, answer.content)
        self.assertIn("planned_hours", answer.json())
        answer = self.desk.patch(
            f"/api/v1/campaigns/{self.draft.pk}/",
            data=b'{"window_hours": 71.999}',
            content_type="application/json",
        )
        self.assertEqual(answer.status_code, 200, answer.content)
        self.assertEqual(Campaign.objects.get(pk=self.draft.pk).window_hours, Decimal("72.00"))

    def test_the_schema_documents_hours_as_a_bounded_number(self) -> None:
        schema = self.desk.get("/api/v1/schema/", HTTP_ACCEPT="application/json").json()
        finish = schema["components"]["schemas"]["FinishRunRequest"]["properties"]
        hours = finish["observed_hours"]
        number = next(s for s in hours["oneOf"] if s["type"] == "number")
        self.assertEqual((number["minimum"], number["maximum"]), (0, 100000))
        self.assertIn("half-up", hours["description"])


class MoneyIsExact(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.owner = make_user("olga", team=cls.team, role="owner")

    def test_a_budget_in_exponent_notation_or_with_extra_places_is_refused(self) -> None:
        desk = as_user(self.owner)
        for budget in ["1e30", "1e3", "10.001", " 10", 10]:
            with self.subTest(budget=budget):
                answer = post(
                    desk,
                    "/api/v1/campaigns/",
                    {
                        "title": "t",
                        "question": "q",
                        "corpus": {"name": "c", "revision": "r"},
                        "budget": budget,
                        "currency": "USD",
                    },
                )
                self.assertEqual(answer.status_code, 400, answer.content)
                self.assertIn("budget", answer.json())
        self.assertFalse(Campaign.objects.exists())


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=1000)
class OversizeBodies(TestCase):
    """Over the body limit is a 413 naming the limit, on every path, with or without a key."""

    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.owner = make_user("olga", team=cls.team, role="owner")
        cls.campaign = committed_campaign(cls.team, cls.owner, lots=0, automatic_rules=True)

    def test_an_oversize_body_is_a_json_413_naming_the_limit_everywhere(self) -> None:
        desk = as_user(self.owner)
        big = b'{"title": "' + b"x" * 5000 + b'"}'
        for url in [
            "/api/v1/campaigns/",
            f"/api/v1/campaigns/{self.campaign.pk}/ledger/",
            "/api/v1/estimates/preview/",
        ]:
            for key in (None, f"big-{url}"):
                with self.subTest(url=url, key=key):
                    headers = {"Idempotency-Key": key} if key else {}
                    answer = desk.post(
                        url, data=big, content_type="application/json", headers=headers
                    )
                    self.assertEqual(answer.status_code, 413, answer.content)
                    self.assertEqual(answer["Content-Type"], "application/json")
                    body = answer.json()
                    self.assertEqual(body["max_bytes"], 1000)
                    self.assertIn("1000 bytes", body["detail"])
        self.assertEqual(Campaign.objects.count(), 1)


class IngestKeysMeetOtherCampaignsAsNotFound(TestCase):
    """An ingest key reaches one campaign: any other (its team's or not) is a 404, its own
    campaign's non-run endpoints a 403."""

    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.other_team = Team.objects.create(name="vision")
        cls.owner = make_user("olga", team=cls.team, role="owner")
        cls.stranger = make_user("sven", team=cls.other_team, role="owner")
        cls.campaign = committed_campaign(cls.team, cls.owner, lots=0, automatic_rules=True)
        cls.sibling = committed_campaign(
            cls.team, cls.owner, title="sibling", lots=0, automatic_rules=True
        )
        cls.foreign = committed_campaign(
            cls.other_team, cls.stranger, title="foreign", lots=0, automatic_rules=True
        )
        cls.raw_key = ingest_key(cls.campaign, cls.owner)

    def setUp(self) -> None:
        self.loop = as_key(self.raw_key)

    def paths(self, campaign: Campaign) -> list[str]:
        stage = Stage.objects.filter(campaign=campaign).first()
        assert stage is not None
        return [
            f"/api/v1/campaigns/{campaign.pk}/",
            f"/api/v1/campaigns/{campaign.pk}/stages/",
            f"/api/v1/campaigns/{campaign.pk}/runs/",
            f"/api/v1/campaigns/{campaign.pk}/ledger/",
            f"/api/v1/campaigns/{campaign.pk}/ledger/summary/",
            f"/api/v1/campaigns/{campaign.pk}/stages/{stage.pk}/observed/",
            f"/api/v1/campaigns/{campaign.pk}/forecast/",
            f"/api/v1/campaigns/{campaign.pk}/reports/",
        ]

    def test_another_campaign_of_any_team_is_a_404(self) -> None:
        for campaign in (self.sibling, self.foreign):
            for path in self.paths(campaign):
                with self.subTest(path=path):
                    self.assertEqual(self.loop.get(path).status_code, 404)
        stage = Stage.objects.filter(campaign=self.foreign).first()
        assert stage is not None
        observed = f"/api/v1/campaigns/{self.foreign.pk}/stages/{stage.pk}/observed/"
        self.assertEqual(post(self.loop, observed, {"observed_hours": 1}).status_code, 404)
        self.assertEqual(self.loop.get("/api/v1/campaigns/999999/").status_code, 404)

    def test_its_own_campaigns_other_endpoints_stay_a_403(self) -> None:
        for path in self.paths(self.campaign):
            with self.subTest(path=path):
                self.assertEqual(self.loop.get(path).status_code, 403)


class IdentifiersAreTakenAsSent(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.owner = make_user("olga", team=cls.team, role="owner")
        cls.campaign = committed_campaign(cls.team, cls.owner, lots=0, automatic_rules=True)
        cls.draft = make_campaign(cls.team, title="a draft")

    def setUp(self) -> None:
        self.desk = as_user(self.owner)

    def assertRefused(self, answer: object, field: str) -> None:
        self.assertEqual(answer.status_code, 400, answer.content)  # type: ignore[attr-defined]
        self.assertIn(field, answer.json())  # type: ignore[attr-defined]

    def test_a_run_id_with_a_trailing_newline_or_spaces_is_refused_not_trimmed(self) -> None:
        runs = f"/api/v1/campaigns/{self.campaign.pk}/runs/"
        for run_id in ["run\n", " run", "run ", "ru\tn"]:
            with self.subTest(run_id=run_id):
                self.assertRefused(post(self.desk, runs, {"run_id": run_id}), "run_id")
        self.assertFalse(Run.objects.exists())

    def test_metric_names_with_surrounding_whitespace_are_refused(self) -> None:
        post(self.desk, f"/api/v1/campaigns/{self.campaign.pk}/runs/", {"run_id": "r-1"})
        for name in [" loss", "loss ", "loss\n"]:
            with self.subTest(name=name):
                answer = post(
                    self.desk,
                    "/api/v1/runs/r-1/metrics/",
                    {"points": [{"name": name, "step": 1, "value": 1.0}]},
                )
                self.assertEqual(answer.status_code, 400, answer.content)
                self.assertIn("name", str(answer.json()))
        rules = f"/api/v1/campaigns/{self.draft.pk}/stop-rules/"
        answer = post(
            self.desk,
            rules,
            {"kind": "metric_threshold", "metric": "loss ", "comparator": "gt", "threshold": 3},
        )
        self.assertRefused(answer, "metric")

    def test_corpus_revision_and_stage_resource_are_refused_with_whitespace(self) -> None:
        answer = post(
            self.desk,
            "/api/v1/campaigns/",
            {
                "title": "t",
                "question": "q",
                "corpus": {"name": "tickets", "revision": "abc123\n"},
                "currency": "USD",
            },
        )
        self.assertRefused(answer, "corpus")
        self.assertIn("revision", answer.json()["corpus"])
        stages = f"/api/v1/campaigns/{self.draft.pk}/stages/"
        answer = post(self.desk, stages, {"name": "s", "kind": "training", "resource": " gpu-a"})
        self.assertRefused(answer, "resource")
        answer = post(self.desk, stages, {"name": "s", "kind": "training", "resource": "gpu a"})
        self.assertEqual(answer.status_code, 201, answer.content)


class EmptyStringsAreNotNull(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.owner = make_user("olga", team=cls.team, role="owner")
        cls.campaign = committed_campaign(cls.team, cls.owner, lots=0, automatic_rules=True)

    def test_empty_hours_or_budget_are_refused_not_read_as_null(self) -> None:
        desk = as_user(self.owner)
        post(desk, f"/api/v1/campaigns/{self.campaign.pk}/runs/", {"run_id": "r-1"})
        answer = post(
            desk, "/api/v1/runs/r-1/finish/", {"status": "completed", "observed_hours": ""}
        )
        self.assertEqual(answer.status_code, 400, answer.content)
        self.assertIn("observed_hours", answer.json())
        draft = make_campaign(self.team, title="draft")
        answer = desk.patch(
            f"/api/v1/campaigns/{draft.pk}/",
            data=b'{"budget": ""}',
            content_type="application/json",
        )
        self.assertEqual(answer.status_code, 400, answer.content)
        self.assertIn("budget", answer.json())

    def test_a_list_documents_its_400_for_bad_limits(self) -> None:
        schema = as_user(self.owner).get("/api/v1/schema/", HTTP_ACCEPT="application/json").json()
        listing = schema["paths"]["/api/v1/campaigns/"]["get"]
        self.assertIn("400", listing["responses"])
        limit = next(p for p in listing["parameters"] if p["name"] == "limit")
        self.assertEqual((limit["schema"]["minimum"], limit["schema"]["maximum"]), (1, 1000))

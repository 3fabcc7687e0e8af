"""Observed hours of a stage, through the API and the admin: the frozen baseline never moves."""

from __future__ import annotations

from decimal import Decimal
from html.parser import HTMLParser

from django.test import TestCase
from django.urls import reverse

from campaigns.models import PlanBaseline, Stage, Team
from campaigns.tests.factories import (
    as_user,
    committed_campaign,
    ingest_client,
    make_plannable,
    make_user,
)


class ObservedHoursApiTests(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.other = Team.objects.create(name="vision")
        cls.planner = make_user("pia", team=cls.team)
        cls.viewer = make_user("vic", team=cls.team, role="viewer")
        cls.outsider = make_user("otto", team=cls.other)
        cls.campaign = committed_campaign(cls.team)
        cls.stage = Stage.objects.get(campaign=cls.campaign)  # "train", 22 h planned
        cls.digest = PlanBaseline.objects.get(campaign=cls.campaign).digest

    def setUp(self) -> None:
        self.api = as_user(self.planner)
        self.url = f"/api/v1/campaigns/{self.campaign.pk}/stages/{self.stage.pk}/observed/"

    def test_within_10_percent_needs_no_note(self) -> None:
        answer = self.api.post(self.url, {"observed_hours": "24.00"}, format="json")
        self.assertEqual(answer.status_code, 200, answer.json())
        body = answer.json()
        self.assertEqual((body["planned_hours"], body["observed_hours"]), ("22.00", "24.00"))
        self.assertEqual(body["deviation_hours"], "2.00")
        self.stage.refresh_from_db()
        self.assertEqual(self.stage.observed_hours, Decimal("24.00"))
        self.assertIsNotNone(self.stage.observed_at)

    def test_more_than_10_percent_off_needs_a_deviation_note(self) -> None:
        answer = self.api.post(self.url, {"observed_hours": 30}, format="json")
        self.assertEqual(answer.status_code, 400)
        self.assertIn("deviation_note", answer.json())
        self.stage.refresh_from_db()
        self.assertIsNone(self.stage.observed_hours)
        explained = self.api.post(
            self.url,
            {"observed_hours": 30, "deviation_note": "long inputs took 8 h more to tokenize"},
            format="json",
        )
        self.assertEqual(explained.status_code, 200, explained.json())
        self.assertEqual(
            explained.json()["deviation_note"], "long inputs took 8 h more to tokenize"
        )

    def test_less_than_planned_by_more_than_10_percent_needs_a_note_too(self) -> None:
        answer = self.api.post(self.url, {"observed_hours": "19.5"}, format="json")
        self.assertEqual(answer.status_code, 400)
        self.assertIn("deviation_note", answer.json())

    def test_the_frozen_baseline_is_never_touched(self) -> None:
        answer = self.api.post(
            self.url, {"observed_hours": "40", "deviation_note": "a GPU died"}, format="json"
        )
        self.assertEqual(answer.status_code, 200, answer.content)
        self.assertEqual(answer.json()["observed_hours"], "40.00")
        baseline = PlanBaseline.objects.get(campaign=self.campaign)
        self.assertEqual(baseline.digest, self.digest)
        self.assertEqual(baseline.snapshot["stages"][0]["planned_hours"], "22.00")
        self.stage.refresh_from_db()
        self.assertEqual(self.stage.planned_hours, Decimal("22.00"))

    def test_a_draft_answers_409(self) -> None:
        draft = make_plannable(self.team, title="Draft")
        stage = Stage.objects.get(campaign=draft)
        answer = self.api.post(
            f"/api/v1/campaigns/{draft.pk}/stages/{stage.pk}/observed/",
            {"observed_hours": "22"},
            format="json",
        )
        self.assertEqual(answer.status_code, 409)
        stage.refresh_from_db()
        self.assertIsNone(stage.observed_hours)

    def test_bad_hours_are_400_naming_the_field(self) -> None:
        for value in (-1, "soon", None, True):
            with self.subTest(value=value):
                answer = self.api.post(self.url, {"observed_hours": value}, format="json")
                self.assertEqual(answer.status_code, 400)
                self.assertIn("observed_hours", answer.json())

    def test_another_teams_stage_is_404_and_viewers_and_keys_cannot_write(self) -> None:
        body = {"observed_hours": "22"}
        self.assertEqual(
            as_user(self.outsider).post(self.url, body, format="json").status_code, 404
        )
        self.assertEqual(as_user(self.viewer).post(self.url, body, format="json").status_code, 403)
        self.assertEqual(
            ingest_client(self.campaign).post(self.url, body, format="json").status_code, 403
        )
        theirs = committed_campaign(self.other, title="Theirs")
        their_stage = Stage.objects.get(campaign=theirs)
        mixed = f"/api/v1/campaigns/{self.campaign.pk}/stages/{their_stage.pk}/observed/"
        self.assertEqual(self.api.post(mixed, body, format="json").status_code, 404)


class _FormFields(HTMLParser):
    """The values a browser would submit from the admin's change form."""

    def __init__(self) -> None:
        super().__init__()
        self.data: dict[str, list[str]] = {}
        self._select: str | None = None
        self._textarea: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        name = a.get("name")
        if tag == "input" and name and a.get("type") not in ("submit", "button", "file"):
            if a.get("type") in ("checkbox", "radio") and "checked" not in a:
                return
            self.data.setdefault(name, []).append(a.get("value") or "")
        elif tag == "select" and name:
            self._select = name
            self.data.setdefault(name, [])
        elif tag == "option" and self._select and "selected" in a:
            self.data[self._select].append(a.get("value") or "")
        elif tag == "textarea" and name:
            self._textarea = name
            self.data[name] = [""]

    def handle_endtag(self, tag: str) -> None:
        if tag == "select":
            self._select = None
        elif tag == "textarea":
            self._textarea = None

    def handle_data(self, data: str) -> None:
        if self._textarea:
            self.data[self._textarea][0] += (
                data.lstrip("\n") if not self.data[self._textarea][0] else data
            )


class ObservedHoursInTheAdminTests(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.planner = make_user("pia", team=cls.team)
        cls.campaign = committed_campaign(cls.team)
        cls.stage = Stage.objects.get(campaign=cls.campaign)

    def test_a_planner_records_observed_hours_in_the_stage_inline_after_commit(self) -> None:
        self.client.force_login(self.planner)
        url = reverse("admin:campaigns_campaign_change", args=[self.campaign.pk])
        page = self.client.get(url)
        self.assertEqual(page.status_code, 200)
        self.assertContains(page, 'name="stages-0-observed_hours"')
        digest = PlanBaseline.objects.get(campaign=self.campaign).digest
        fields = _FormFields()
        fields.feed(page.content.decode())
        # A multi-select with nothing selected sends nothing (the empty row's "cut variants").
        data = {k: v if len(v) > 1 else v[0] for k, v in fields.data.items() if v}
        data["stages-0-observed_hours"] = "26.5"
        data["stages-0-deviation_note"] = "the pilot showed longer sequences"
        data["_continue"] = "Save and continue editing"
        saved = self.client.post(url, data)
        self.assertEqual(saved.status_code, 302, saved.content.decode()[:2000])
        self.stage.refresh_from_db()
        self.assertEqual(self.stage.observed_hours, Decimal("26.50"))
        self.assertEqual(self.stage.deviation_note, "the pilot showed longer sequences")
        self.assertEqual(self.stage.planned_hours, Decimal("22.00"))
        self.assertEqual(PlanBaseline.objects.get(campaign=self.campaign).digest, digest)


class ObservedStageFormTests(TestCase):
    """The form the campaign admin's stage inline can use to hold the API's rules."""

    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.campaign = committed_campaign(cls.team)
        cls.stage = Stage.objects.get(campaign=cls.campaign)

    def form(self, stage: Stage, **changes: str):  # type: ignore[no-untyped-def]
        from campaigns.admin import StageForm

        data = {
            "name": stage.name,
            "kind": stage.kind,
            "machine": "on" if stage.machine else "",
            "resource": stage.resource,
            "planned_hours": str(stage.planned_hours),
            "observed_hours": "",
            "deviation_note": "",
            **changes,
        }
        # A fresh row each time: a form writes its values into its instance while cleaning.
        return StageForm(data, instance=Stage.objects.get(pk=stage.pk))

    def test_it_asks_for_a_note_beyond_10_percent(self) -> None:
        refused = self.form(self.stage, observed_hours="30")
        self.assertFalse(refused.is_valid())
        self.assertIn("deviation_note", refused.errors)
        accepted = self.form(self.stage, observed_hours="30", deviation_note="slow disks")
        self.assertTrue(accepted.is_valid(), accepted.errors)

    def test_it_refuses_observed_hours_on_a_draft(self) -> None:
        draft = make_plannable(self.team, title="Draft")
        form = self.form(Stage.objects.get(campaign=draft), observed_hours="22")
        self.assertFalse(form.is_valid())
        self.assertIn("observed_hours", form.errors)

"""Names refuse the Unicode bidirectional controls (issue 19, Low; docs/domain.md §25): a
campaign's title and the names of items, runs, teams and stages answer 400 naming the field in
the API, a form error in the admin, and MLflow's INVALID_PARAMETER_VALUE through the facade.
Nothing with the character is stored."""

from __future__ import annotations

import json

from django.test import TestCase
from django.urls import reverse
from hypothesis import given
from hypothesis import strategies as st

from campaigns.models import Campaign, PlannedItem, Run, Stage, Team
from campaigns.tests.factories import (
    as_user,
    committed_campaign,
    ingest_key,
    make_plannable,
    make_user,
    patch,
    post,
)
from catalog.domain.display_text import BIDI_CONTROLS, bidi_controls_in, bidi_refusal
from tests.adminforms import form_data

RLO = "\u202e"  # RIGHT-TO-LEFT OVERRIDE: "loss\u202etxt.exe" shows as "lossexe.txt"
SPOOF = f"baseline{RLO}gnp.exe"


def test_the_controls_are_the_embeddings_overrides_and_isolates() -> None:
    assert sorted(f"U+{ord(c):04X}" for c in BIDI_CONTROLS) == [
        "U+202A", "U+202B", "U+202C", "U+202D", "U+202E",
        "U+2066", "U+2067", "U+2068", "U+2069",
    ]  # fmt: skip
    # The marks right-to-left text needs are not among them.
    assert bidi_refusal("שלום\u200f world \u200e\u061c") is None
    assert bidi_controls_in(f"a{RLO}b\u2066c{RLO}") == ["U+202E", "U+2066"]


@given(st.text(), st.sampled_from(sorted(BIDI_CONTROLS)), st.text())
def test_any_text_with_a_control_anywhere_is_refused_and_named(
    before: str, control: str, after: str
) -> None:
    refusal = bidi_refusal(before + control + after)
    assert refusal is not None and f"U+{ord(control):04X}" in refusal


@given(st.text().filter(lambda t: not set(t) & BIDI_CONTROLS))
def test_text_without_one_is_taken(text: str) -> None:
    assert bidi_refusal(text) is None


class TheApiNamesTheField(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.owner = make_user("olga", team=cls.team, role="owner")
        cls.draft = make_plannable(cls.team, title="a draft")

    def setUp(self) -> None:
        self.desk = as_user(self.owner)

    def assert_refused(self, answer, field: str) -> None:  # type: ignore[no-untyped-def]
        self.assertEqual(answer.status_code, 400, answer.content)
        self.assertIn("U+202E", " ".join(map(str, answer.json()[field])))

    def test_a_campaign_title(self) -> None:
        body = {
            "team": self.team.pk,
            "title": SPOOF,
            "question": "q",
            "corpus_name": "c",
            "corpus_revision": "r",
            "window_hours": "72",
        }
        self.assert_refused(post(self.desk, "/api/v1/campaigns/", body), "title")
        self.assert_refused(
            patch(self.desk, f"/api/v1/campaigns/{self.draft.pk}/", {"title": SPOOF}), "title"
        )
        self.assertFalse(Campaign.objects.filter(title=SPOOF).exists())

    def test_an_item_and_a_stage_name(self) -> None:
        item = {"name": SPOOF, "role": "variant", "tier": "useful", "planned_hours": "1"}
        url = f"/api/v1/campaigns/{self.draft.pk}/"
        self.assert_refused(post(self.desk, url + "variants/", item), "name")
        stage = {"name": SPOOF, "kind": "training", "resource": "gpu-a", "planned_hours": "1"}
        self.assert_refused(post(self.desk, url + "stages/", stage), "name")
        self.assertFalse(PlannedItem.objects.filter(name=SPOOF).exists())
        self.assertFalse(Stage.objects.filter(name=SPOOF).exists())


class TheAdminShowsAFormError(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.owner = make_user("olga", team=cls.team, role="owner", is_superuser=True)
        cls.draft = make_plannable(cls.team, title="a draft")

    def setUp(self) -> None:
        self.client.force_login(self.owner)

    def test_the_campaign_page_refuses_a_title_and_an_item_name(self) -> None:
        url = reverse("admin:campaigns_campaign_change", args=[self.draft.pk])
        data = form_data(self.client.get(url).content.decode(), "campaign_form")
        data["title"] = SPOOF
        data["items-0-name"] = SPOOF
        answer = self.client.post(url, data)
        self.assertEqual(answer.status_code, 200)
        self.assertContains(answer, "U+202E", count=2)
        self.draft.refresh_from_db()
        self.assertEqual(self.draft.title, "a draft")
        self.assertFalse(PlannedItem.objects.filter(name=SPOOF).exists())

    def test_the_team_add_form_refuses_a_name(self) -> None:
        answer = self.client.post(reverse("admin:campaigns_team_add"), {"name": f"ops{RLO}"})
        self.assertEqual(answer.status_code, 200)
        self.assertContains(answer, "U+202E")
        self.assertFalse(Team.objects.filter(name=f"ops{RLO}").exists())


class TheMlflowFacadeRefusesARunName(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.owner = make_user("olga", team=cls.team, role="owner")
        cls.campaign = committed_campaign(cls.team, cls.owner, lots=0)
        cls.raw_key = ingest_key(cls.campaign, cls.owner)

    def call(self, route: str, body: dict[str, object]):  # type: ignore[no-untyped-def]
        return self.client.post(
            f"/mlflow/api/2.0/mlflow/{route}",
            data=json.dumps(body),
            content_type="application/json",
            headers={"Authorization": f"Bearer {self.raw_key}"},
        )

    def test_at_creation_by_rename_and_by_its_tag(self) -> None:
        experiment = str(self.campaign.pk)
        refused = self.call("runs/create", {"experiment_id": experiment, "run_name": SPOOF})
        self.assertEqual(refused.status_code, 400, refused.content)
        self.assertEqual(refused.json()["error_code"], "INVALID_PARAMETER_VALUE")
        self.assertIn("run_name", refused.json()["message"])
        item = {"key": "desk.variant", "value": "baseline"}
        tagged = {
            "experiment_id": experiment,
            "tags": [item, {"key": "mlflow.runName", "value": SPOOF}],
        }
        self.assertEqual(self.call("runs/create", tagged).status_code, 400)
        created = self.call(
            "runs/create", {"experiment_id": experiment, "run_name": "fine", "tags": [item]}
        )
        self.assertEqual(created.status_code, 200, created.content)
        run_id = created.json()["run"]["info"]["run_id"]
        rename = self.call("runs/update", {"run_id": run_id, "run_name": SPOOF})
        self.assertEqual(rename.status_code, 400, rename.content)
        tag = self.call("runs/set-tag", {"run_id": run_id, "key": "mlflow.runName", "value": SPOOF})
        self.assertEqual(tag.status_code, 400, tag.content)
        self.assertEqual(Run.objects.get(run_id=run_id).run_name, "fine")

"""Fates from facts (issue 30, item 5; docs/domain.md §5.5), through the API and the closing
report: the seed's data check and resume check, whose stages were done with no full run, close
as done (verified by their typed stages), not as "planned: no run was logged for it"; an item
only an accepted deliverable verifies is done in the report, verified by it, while the API,
which reads no ledger rows, says planned with nothing verifying it, and says why."""

from __future__ import annotations

from django.test import TestCase

from campaigns.models import Campaign, Team
from campaigns.tests.factories import GOOD_SHA, as_user, make_user
from ledger.rendering.closing_report import render_markdown
from ledger.selectors.closing_report import collect
from ledger.tests.support import call, seed_campaign


class FatesFromFacts(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.planner = make_user("pia", team=cls.team)
        api = as_user(cls.planner)
        cls.built = built = seed_campaign(api, close=False)
        cid = built["id"]
        # An error analysis added after commit: one inference run, its deliverable accepted.
        cls.analysis = call(
            api,
            f"campaigns/{cid}/variants/",
            {
                "name": "Error analysis",
                "role": "other",
                "tier": "useful",
                "planned_hours": "1",
                "amendment_reason": "the reviewers asked for one",
            },
        )["id"]
        call(
            api,
            f"campaigns/{cid}/runs/",
            {"run_id": "errors-1", "variant": cls.analysis, "kind": "inference"},
        )
        call(api, "runs/errors-1/finish/", {"status": "completed", "observed_hours": "0.5"}, 200)
        answer = call(
            api,
            f"campaigns/{cid}/deliverables/",
            {
                "kind": "error_analysis",
                "corpus": {"name": "tickets", "revision": "abc123"},
                "run": "errors-1",
                "expected_ids_ok": True,
                "reload_verified": True,
                "files": [{"path": "out/errors.md", "size_bytes": 900, "sha256": GOOD_SHA}],
            },
        )
        assert answer["accepted"], answer
        call(api, f"campaigns/{cid}/close/", {"conclusion": "Variant A wins by 1.4 F1."}, 200)

    def setUp(self) -> None:
        campaign = Campaign.objects.get(pk=self.built["id"])
        self.data = collect(campaign)
        self.report = {i["name"]: i for t in self.data["items"]["tiers"] for i in t["items"]}
        answer = as_user(self.planner).get(f"/api/v1/campaigns/{campaign.pk}/variants/")
        self.assertEqual(answer.status_code, 200)
        self.api = {i["name"]: i for i in answer.json()["results"]}

    def test_the_checks_whose_stages_were_done_are_done_in_the_api_and_the_report(self) -> None:
        for name, words in (
            ("Data check", "Check the data: 1.00 h typed"),
            ("Resume check", "Checkpoint write and restore: 2.00 h typed"),
        ):
            api, report = self.api[name], self.report[name]
            self.assertEqual((api["fate"], api["status"], report["fate"]), ("done", "done", "done"))
            self.assertEqual(api["verified_by"], [words])
            self.assertEqual(report["verified_by"], [words])
            self.assertEqual(report["detail"], f"verified by {words}")
        self.assertNotIn("no run was logged", render_markdown(self.data))

    def test_runs_still_settle_the_trained_items_and_the_cut_one(self) -> None:
        for name in ("Baseline", "Variant A"):
            self.assertEqual(self.api[name]["verified_by"][0], "1 completed full run")
            self.assertEqual(self.report[name]["fate"], "done")
        self.assertEqual(
            (self.api["Variant B"]["fate"], self.report["Variant B"]["fate"]), ("cut",) * 2
        )

    def test_an_item_only_a_deliverable_verifies_is_done_in_the_report_planned_in_the_api(
        self,
    ) -> None:
        report = self.report["Error analysis"]
        self.assertEqual(report["fate"], "done")
        self.assertEqual(len(report["verified_by"]), 1)
        self.assertRegex(
            report["verified_by"][0],
            r"^accepted deliverable #\d+ \(error_analysis, tickets @ abc123\) from run errors-1$",
        )
        api = self.api["Error analysis"]
        self.assertEqual(
            (api["fate"], api["status"], api["verified_by"]), ("planned", "planned", [])
        )
        schema = as_user(self.planner).get("/api/v1/schema/?format=json").json()
        fate = schema["components"]["schemas"]["PlannedItem"]["properties"]["fate"]
        self.assertIn("Accepted deliverables are not read here", fate["description"])

    def test_the_resume_check_reads_its_fate_in_the_checkpoints_section_too(self) -> None:
        [resume] = self.data["checkpoints"]["resume_items"]
        self.assertEqual((resume["name"], resume["status"]), ("Resume check", "done"))

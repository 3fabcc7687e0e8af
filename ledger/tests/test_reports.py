"""The closing report: requested through the API, built by the task, downloaded in three
renderings, and written by `manage.py closing_report`."""

from __future__ import annotations

import json
import re
import tempfile
from decimal import Decimal
from io import StringIO
from pathlib import Path
from typing import Any

from django.core.management import CommandError, call_command
from django.db import connection
from django.test import TestCase
from django.test.utils import CaptureQueriesContext

from campaigns.models import (
    Campaign,
    Checkpoint,
    PlanBaseline,
    PlannedItem,
    Stage,
    Team,
)
from campaigns.tests.factories import (
    GOOD_SHA,
    add_points,
    as_user,
    celery_eager,
    committed_campaign,
    ingest_client,
    make_run,
    make_user,
)
from catalog.models import RentalPlan
from ledger.models import Report
from ledger.rendering.closing_report import render_html, render_markdown
from ledger.selectors.closing_report import collect
from ledger.services.closing_reports import build


class ApiRefused(AssertionError):
    """The API answered another status than the scenario expects."""


def build_campaign_through_the_api(api: Any) -> dict[str, Any]:
    """A campaign planned, run and closed through the public API, as docs/api.md describes it.

    Stages and lots have no endpoint of their own yet, so those two are written with the ORM
    before the commit; everything else goes over HTTP with the planner's token.
    """

    def post(path: str, body: dict[str, Any], expect: int = 201) -> dict[str, Any]:
        answer = api.post(f"/api/v1/{path}", body, format="json")
        if answer.status_code != expect:
            raise ApiRefused(f"POST {path}: {answer.status_code} {answer.content[:500]!r}")
        return answer.json()

    campaign = post(
        "campaigns/",
        {
            "title": "LoRA rank on support tickets",
            "question": "Does variant A beat the baseline on tickets by at least 1 F1?",
            "corpus": {"name": "tickets", "revision": "abc123"},
            "window_hours": "72",
            "budget": "110.00",
            "currency": "USD",
        },
    )
    cid = campaign["id"]
    items = {
        body["name"]: post(f"campaigns/{cid}/variants/", body)["id"]
        for body in (
            {"name": "baseline", "role": "baseline", "tier": "mandatory", "planned_hours": "10"},
            {
                "name": "variant A",
                "role": "variant",
                "tier": "useful",
                "planned_hours": "12",
                "config": {"lora_rank": 16},
            },
            {
                "name": "variant B",
                "role": "variant",
                "tier": "exploratory",
                "planned_hours": "8",
                "config": {"lora_rank": 64},
            },
            {
                "name": "resume check",
                "role": "resume_check",
                "tier": "mandatory",
                "planned_hours": "2",
            },
        )
    }
    post(f"campaigns/{cid}/stop-rules/", {"kind": "non_finite_loss", "metric": "loss"})

    setup = Stage.objects.create(
        campaign_id=cid, name="Install", kind="setup", resource="gpu-a", planned_hours=2
    )
    stages = {"Install": setup}
    for name, item, hours in (
        ("Train baseline", "baseline", 10),
        ("Train variant A", "variant A", 12),
        ("Train variant B", "variant B", 8),
    ):
        stage = Stage.objects.create(
            campaign_id=cid,
            name=name,
            kind="training",
            resource="gpu-a",
            variant_id=items[item],
            planned_hours=hours,
        )
        stage.depends_on.add(setup)
        stages[name] = stage
    stages["Prepare configs"] = Stage.objects.create(
        campaign_id=cid, name="Prepare configs", kind="human_prep", machine=False, planned_hours=3
    )
    plan = RentalPlan.objects.get(provider="IteraGPU", name="RTX 4090, 3 days")
    Campaign.objects.get(pk=cid).lots.create(plan=plan, quantity=1)

    post(f"campaigns/{cid}/commit/", {}, expect=200)

    post(f"campaigns/{cid}/runs/", {"run_id": "base-1", "variant": items["baseline"]})
    post(
        "runs/base-1/metrics/",
        {"points": [{"name": "loss", "step": s, "value": 2.0 - s / 100} for s in range(1, 51)]},
    )
    post(
        "runs/base-1/checkpoints/",
        {
            "step": 50,
            "components": ["model", "optimizer", "progress"],
            "restore_seconds": 42,
            "write_seconds": 9,
            "location": "s3://ckpts/base-1/step-50",
            "resume_verified": True,
        },
    )
    post("runs/base-1/finish/", {"status": "completed", "observed_hours": "11"}, expect=200)

    post(
        f"campaigns/{cid}/runs/",
        {"run_id": "varA-1", "variant": items["variant A"], "config": {"lr": 3e-4}},
    )
    stopped = post(
        "runs/varA-1/metrics/", {"points": [{"name": "loss", "step": 7, "value": "NaN"}]}
    )
    if not stopped["stopped"]:
        raise ApiRefused("a NaN loss did not stop varA-1")
    post("runs/varA-1/finish/", {"status": "completed", "observed_hours": "3"}, expect=200)
    post(
        f"campaigns/{cid}/runs/",
        {"run_id": "varA-2", "variant": items["variant A"], "config": {"lr": 1e-4}},
    )
    post("runs/varA-2/finish/", {"status": "completed", "observed_hours": "12.5"}, expect=200)

    post(
        f"campaigns/{cid}/decisions/",
        {
            "outcome": "cut",
            "rationale": "A is enough to answer; B would not change the choice",
            "cut_variants": [items["variant B"]],
        },
    )
    post(
        f"campaigns/{cid}/stages/{setup.pk}/observed/",
        {"observed_hours": "2.5", "deviation_note": "the CUDA driver had to be reinstalled"},
        expect=200,
    )
    post(
        f"campaigns/{cid}/stages/{stages['Prepare configs'].pk}/observed/",
        {"observed_hours": "3"},
        expect=200,
    )
    post(
        f"campaigns/{cid}/ledger/",
        {"kind": "included", "description": "storage", "amount": "5.00", "currency": "USD"},
    )
    post(
        f"campaigns/{cid}/ledger/",
        {"kind": "external", "description": "annotators", "amount": "12.00", "currency": "USD"},
    )
    post(
        f"campaigns/{cid}/deliverables/",
        {
            "kind": "predictions",
            "corpus": {"name": "tickets", "revision": "abc123"},
            "run": "base-1",
            "expected_ids_ok": True,
            "reload_verified": True,
            "files": [{"path": "out/preds.jsonl", "size_bytes": 2048, "sha256": GOOD_SHA}],
        },
    )
    post(
        f"campaigns/{cid}/deliverables/",
        {
            "kind": "adapter",
            "corpus": {"name": "tickets", "revision": "abc123"},
            "run": "varA-1",
            "expected_ids_ok": True,
            "reload_verified": True,
            "files": [{"path": "out/adapter.safetensors", "size_bytes": 4096, "sha256": GOOD_SHA}],
        },
    )
    # The conclusion is written in the admin after commit (the API edits drafts only).
    Campaign.objects.filter(pk=cid).update(conclusion="Variant A does not beat the baseline.")
    return {"id": cid, "items": items, "stages": {k: v.pk for k, v in stages.items()}}


class ClosingReportThroughTheApiTests(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.other = Team.objects.create(name="vision")
        cls.planner = make_user("pia", team=cls.team)
        cls.viewer = make_user("vic", team=cls.team, role="viewer")
        cls.outsider = make_user("otto", team=cls.other)
        cls.built = build_campaign_through_the_api(as_user(cls.planner))

    def setUp(self) -> None:
        self.api = as_user(self.planner)
        self.cid = self.built["id"]

    def request_report(self) -> dict[str, Any]:
        with celery_eager(), self.captureOnCommitCallbacks(execute=True):
            answer = self.api.post(f"/api/v1/campaigns/{self.cid}/reports/", {}, format="json")
        self.assertEqual(answer.status_code, 202, answer.content)
        self.assertLessEqual({"id", "status"}, set(answer.json()))
        status = self.api.get(f"/api/v1/reports/{answer.json()['id']}/")
        self.assertEqual(status.status_code, 200)
        return status.json()

    def download(self, report: dict[str, Any], rendering: str) -> Any:
        answer = self.api.get(report["links"][rendering])
        self.assertEqual(answer.status_code, 200)
        return answer

    def test_a_report_is_accepted_with_202_then_ready_with_three_links(self) -> None:
        report = self.request_report()
        self.assertEqual(report["status"], "ready", report.get("error"))
        self.assertEqual(set(report["links"]), {"html", "markdown", "json"})
        self.assertEqual(report["html"], report["links"]["html"])
        self.assertTrue(report["links"]["json"].endswith(f"/api/v1/reports/{report['id']}/json/"))
        html = self.download(report, "html")
        self.assertTrue(html["Content-Type"].startswith("text/html"))
        self.assertIn("default-src 'none'", html["Content-Security-Policy"])
        markdown = self.download(report, "markdown")
        self.assertTrue(markdown["Content-Type"].startswith("text/markdown"))
        self.assertIn("attachment;", markdown["Content-Disposition"])

    def test_the_json_report_holds_what_happened_beside_the_frozen_plan(self) -> None:
        data = json.loads(self.download(self.request_report(), "json").content)
        self.assertEqual(
            data["campaign"]["question"],
            "Does variant A beat the baseline on tickets by at least 1 F1?",
        )
        self.assertEqual(data["campaign"]["conclusion"], "Variant A does not beat the baseline.")
        baseline = PlanBaseline.objects.get(campaign_id=self.cid)
        self.assertEqual(data["campaign"]["baseline"]["digest"], baseline.digest)
        # Committed plan and lots.
        self.assertEqual(data["plan"]["lots_total"], [{"currency": "USD", "amount": "47.14"}])
        self.assertEqual(len(data["plan"]["items"]), 4)
        # Costs: included with the rental, external apart.
        costs = data["costs"]
        self.assertEqual(
            (costs["rental"], costs["included"], costs["incurred"], costs["external"]),
            ("47.14", "5.00", "52.14", "12.00"),
        )
        # One accepted corpus: the incurred cost per accepted deliverable.
        ratio = data["cost_per_accepted"]
        self.assertEqual((ratio["ratio"], ratio["cost_per_accepted"]), ("defined", "52.14"))
        self.assertEqual(ratio["accepted_deliverables"], 1)

    def test_reserved_and_observed_hours_per_stage_with_each_deviation_explained_or_not(
        self,
    ) -> None:
        data = json.loads(self.download(self.request_report(), "json").content)
        stages = {s["name"]: s for s in data["hours"]["stages"]}
        install = stages["Install"]
        self.assertEqual((install["planned_hours"], install["observed_hours"]), ("2.00", "2.50"))
        self.assertEqual(install["deviation_note"], "the CUDA driver had to be reinstalled")
        self.assertTrue(install["needs_note"] and install["explained"])
        self.assertEqual((install["planned_start"], install["planned_end"]), ("0.00", "2.00"))
        # Training stages take their runs' observed hours when nobody recorded the stage's own.
        baseline = stages["Train baseline"]
        self.assertEqual(
            (baseline["observed_hours"], baseline["observed_source"]), ("11.00", "runs")
        )
        self.assertFalse(baseline["needs_note"])
        variant_a = stages["Train variant A"]
        self.assertEqual(variant_a["observed_hours"], "15.50")  # 3 h stopped + 12.5 h completed
        self.assertFalse(variant_a["explained"])
        self.assertEqual(data["hours"]["unexplained_deviations"], ["Train variant A"])
        self.assertIsNone(stages["Train variant B"]["observed_hours"])
        totals = data["hours"]["totals"]
        self.assertEqual(totals["reserved_machine_hours"], "32.00")
        self.assertEqual(totals["observed_machine_hours"], "29.00")
        self.assertEqual(
            (totals["planned_human_hours"], totals["observed_human_hours"]), ("3.00", "3.00")
        )
        # For the next campaign: observed over committed per kind of stage (the cut variant B
        # ran nothing and is left out; the clone applies the same lessons).
        ratios = {r["kind"]: r["ratio"] for r in data["next_campaign"]["ratios"]}
        self.assertEqual(ratios, {"human_prep": "1.00", "setup": "1.25", "training": "1.20"})

    def test_items_per_tier_with_their_fate_and_the_decisions(self) -> None:
        data = json.loads(self.download(self.request_report(), "json").content)
        fates = {i["name"]: i for tier in data["items"]["tiers"] for i in tier["items"]}
        self.assertEqual(fates["baseline"]["fate"], "done")
        self.assertEqual(fates["variant B"]["fate"], "cut")
        self.assertIn("B would not change the choice", fates["variant B"]["detail"])
        self.assertEqual(fates["resume check"]["fate"], "planned")
        stopped = fates["variant A"]["stopped_runs"]
        self.assertEqual(
            [(s["run_id"], s["rule"]) for s in stopped], [("varA-1", "non_finite_loss")]
        )
        self.assertTrue(stopped[0]["reason"])
        self.assertEqual(data["decisions"][0]["outcome"], "cut")
        self.assertEqual(data["decisions"][0]["cut_items"], ["variant B"])
        self.assertEqual(data["decisions"][0]["decided_by"], "pia")
        self.assertEqual(data["runs"]["total"], 3)
        self.assertEqual(data["runs"]["metric_points"], 51)
        self.assertEqual(data["runs"]["non_finite_points"], 1)

    def test_deliverables_checkpoints_and_reload_instructions(self) -> None:
        data = json.loads(self.download(self.request_report(), "json").content)
        delivered = data["deliverables"]
        self.assertEqual((delivered["submitted"], delivered["accepted"]), (2, 1))
        rejected = next(d for d in delivered["items"] if not d["accepted"])
        self.assertIn("run varA-1 was stopped", rejected["rejection_reasons"][0])
        self.assertTrue(any("base_revision" in r for r in rejected["rejection_reasons"]))
        checkpoints = data["checkpoints"]
        self.assertTrue(checkpoints["usable_resume"])
        self.assertEqual(checkpoints["best"]["location"], "s3://ckpts/base-1/step-50")
        self.assertEqual(checkpoints["best"]["missing"], [])
        steps = "\n".join(data["reload_instructions"])
        self.assertIn("out/preds.jsonl", steps)
        self.assertIn("s3://ckpts/base-1/step-50", steps)
        self.assertNotIn("out/adapter.safetensors", steps)  # rejected: nothing to reload

    def test_the_markdown_and_html_say_the_same_in_words_and_charts(self) -> None:
        report = self.request_report()
        markdown = self.download(report, "markdown").content.decode()
        for text in (
            "## Question and conclusion",
            "Variant A does not beat the baseline.",
            "**52.14 USD** per accepted deliverable, counted by distinct corpus",
            "External, listed apart: 12.00 USD",
            "the CUDA driver had to be reinstalled",
            "| variant B | variant | cut |",
            "run varA-1 stopped",
            "| training | — | 2 | 22.00 | 26.50 | ×1.20 | this campaign: training took ×1.20 "
            "(26.50 h for 22.00 h) | ×1.10–×1.29 |",
        ):
            self.assertIn(text, markdown)
        html = self.download(report, "html").content.decode()
        self.assertIn('id="chart-timeline"', html)
        self.assertIn('id="chart-costs"', html)
        widths = [float(w) for w in re.findall(r'class="bar"[^>]*width="([0-9.]+)"', html)]
        self.assertGreaterEqual(len(widths), 10)
        self.assertTrue(all(w > 0 for w in widths[:5]))

    def test_viewers_read_reports_but_cannot_start_one_and_keys_cannot_touch_them(self) -> None:
        report = self.request_report()
        viewer = as_user(self.viewer)
        self.assertEqual(viewer.get(f"/api/v1/reports/{report['id']}/").status_code, 200)
        self.assertEqual(viewer.get(report["links"]["json"]).status_code, 200)
        refused = viewer.post(f"/api/v1/campaigns/{self.cid}/reports/", {}, format="json")
        self.assertEqual(refused.status_code, 403)
        key = ingest_client(Campaign.objects.get(pk=self.cid))
        self.assertEqual(key.post(f"/api/v1/campaigns/{self.cid}/reports/").status_code, 403)
        self.assertEqual(key.get(f"/api/v1/reports/{report['id']}/").status_code, 403)
        self.assertEqual(Report.objects.count(), 1)

    def test_another_teams_report_is_404(self) -> None:
        report = self.request_report()
        outsider = as_user(self.outsider)
        for url in (f"/api/v1/reports/{report['id']}/", report["links"]["html"]):
            self.assertEqual(outsider.get(url).status_code, 404)
        answer = outsider.post(f"/api/v1/campaigns/{self.cid}/reports/", {}, format="json")
        self.assertEqual(answer.status_code, 404)

    def test_a_pending_report_has_no_links_and_its_renderings_answer_409(self) -> None:
        # Without running the on-commit callbacks, the report stays pending.
        answer = self.api.post(f"/api/v1/campaigns/{self.cid}/reports/", {}, format="json")
        self.assertEqual(answer.json()["status"], "pending")
        rid = answer.json()["id"]
        status = self.api.get(f"/api/v1/reports/{rid}/").json()
        self.assertIsNone(status["links"])
        self.assertEqual(self.api.get(f"/api/v1/reports/{rid}/html/").status_code, 409)

    def test_the_command_writes_each_format_synchronously(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            target = Path(tmp) / "out" / "report.json"
            call_command(
                "closing_report",
                str(self.cid),
                "--format",
                "json",
                "--output",
                str(target),
                stderr=StringIO(),
            )
            data = json.loads(target.read_text())
        self.assertEqual(data["costs"]["incurred"], "52.14")
        out = StringIO()
        call_command("closing_report", str(self.cid), "--format", "markdown", stdout=out)
        self.assertIn("# Closing report: LoRA rank on support tickets", out.getvalue())
        out = StringIO()
        call_command("closing_report", str(self.cid), "--format", "html", stdout=out)
        self.assertIn("<svg", out.getvalue())
        self.assertFalse(Report.objects.exists())
        with self.assertRaises(CommandError):
            call_command("closing_report", "999999", "--format", "json", stdout=StringIO())


class ReportBuildTests(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.campaign = committed_campaign(cls.team)

    def test_building_twice_leaves_a_ready_report_as_it_was(self) -> None:
        report = Report.objects.create(campaign=self.campaign)
        first = build(report.pk)
        assert first is not None
        self.assertEqual(first.status, "ready")
        second = build(report.pk)
        assert second is not None
        self.assertEqual(second.finished_at, first.finished_at)
        self.assertEqual(second.html, first.html)

    def test_a_missing_report_is_nothing_to_build(self) -> None:
        self.assertIsNone(build(987654))

    def test_a_failure_is_recorded_on_the_report_not_raised(self) -> None:
        # A baseline without its window cannot be scheduled nor compared: the build fails.
        broken = Campaign.objects.create(
            team=self.team, title="No window", question="?", corpus_name="c", corpus_revision="r"
        )
        PlanBaseline.objects.create(campaign=broken, snapshot={"stages": []})
        report = Report.objects.create(campaign=broken)
        built = build(report.pk)
        assert built is not None
        self.assertEqual(built.status, "failed")
        self.assertIn("window_hours", built.error)
        self.assertIsNotNone(built.finished_at)

    def test_a_draft_is_reported_as_a_draft_not_as_a_frozen_plan(self) -> None:
        from campaigns.tests.factories import make_plannable

        draft = make_plannable(self.team, title="Draft")
        data = collect(draft)
        self.assertFalse(data["plan"]["committed"])
        self.assertIn("never committed", data["plan"]["note"])
        self.assertIn("never committed", render_markdown(data))

    def test_without_any_accepted_deliverable_it_shows_undefined_the_cost_and_the_causes(
        self,
    ) -> None:
        from ledger.services import submit_deliverable

        submit_deliverable(
            campaign=self.campaign,
            kind="predictions",
            corpus_name="tickets",
            corpus_revision="r1",
            files=[{"path": "/tmp/p.jsonl", "size_bytes": 0, "sha256": GOOD_SHA}],
            expected_ids_ok=True,
            reload_verified=True,
        )
        Campaign.objects.filter(pk=self.campaign.pk).update(conclusion="No variant helps.")
        self.campaign.refresh_from_db()
        data = collect(self.campaign)
        ratio = data["cost_per_accepted"]
        self.assertEqual((ratio["ratio"], ratio["cost_per_accepted"]), ("undefined", None))
        self.assertEqual(ratio["incurred"], "47.14")
        self.assertIn("empty file: /tmp/p.jsonl (0 bytes)", ratio["rejection_reasons"])
        self.assertIn("No variant helps.", ratio["statement"])
        html = render_html(data)
        self.assertIn('id="cost-per-accepted-value">undefined', html)
        self.assertIn("empty file: /tmp/p.jsonl (0 bytes)", html)


class BoundedQueriesTests(TestCase):
    """The number of SQL queries of a report does not grow with runs, points or checkpoints."""

    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")

    def campaign_with(self, runs: int, points_per_run: int) -> Campaign:
        campaign = committed_campaign(self.team, title=f"{runs} runs")
        item = PlannedItem.objects.get(campaign=campaign, name="baseline")
        for n in range(runs):
            status = "stopped" if n % 3 == 0 else "completed"
            run = make_run(
                campaign,
                f"{campaign.pk}-r{n}",
                variant=item,
                status=status,
                observed_hours="1.5",
                stop_reason="loss is NaN" if status == "stopped" else "",
            )
            add_points(run, [("loss", s, 1.0 / (s + 1)) for s in range(points_per_run)])
            Checkpoint.objects.create(
                run=run,
                step=10,
                components=["model", "optimizer", "progress"],
                resume_verified=n % 2 == 0,
                location=f"s3://c/{n}",
            )
        return campaign

    def queries_for(self, campaign: Campaign) -> tuple[int, dict[str, Any]]:
        campaign = Campaign.objects.select_related("team", "committed_by").get(pk=campaign.pk)
        with CaptureQueriesContext(connection) as captured:
            data = collect(campaign)
            render_html(data)
            render_markdown(data)
        return len(captured.captured_queries), data

    def test_ten_times_the_runs_and_points_take_the_same_number_of_queries(self) -> None:
        # Both planned first: each is then the other's team-mate, whose stages the team's
        # calibration reads (a team's first campaign reads none: fewer queries, whatever its runs).
        small_campaign = self.campaign_with(runs=3, points_per_run=5)
        large_campaign = self.campaign_with(runs=30, points_per_run=50)
        small, small_data = self.queries_for(small_campaign)
        large, large_data = self.queries_for(large_campaign)
        self.assertEqual(small, large)
        # 14 facts (docs/domain.md §16); the campaign's forecast, whose timeline gives every
        # hour figure (§7a): its baseline, GPUs, items, plan offers, lots, pilots, calibrated
        # stages, the timeline's six reads and the team's calibration (§20: eight, the
        # team-mates' timelines read at once); the lessons for the next campaign (§21: the
        # items, the GPU names and the team's calibration again, this campaign's included); the
        # lots' durations; spend over time (§18.4); quality per dollar (§18.6) its rule, lots,
        # runs, best values and items once each.
        self.assertLessEqual(large, 56)
        self.assertEqual(large_data["runs"]["total"], 30)
        self.assertEqual(large_data["runs"]["metric_points"], 1500)
        self.assertEqual(large_data["checkpoints"]["verified"], 15)
        self.assertEqual(small_data["runs"]["metric_points"], 15)
        self.assertEqual(Decimal(large_data["runs"]["observed_hours"]), Decimal("45.00"))

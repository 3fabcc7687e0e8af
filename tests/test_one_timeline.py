"""Every surface states the same hours (issue 30, docs/domain.md §7.7): a hypothesis state
machine walks random campaigns through the public API (plan → commit → pilots from the client's
endpoints and from MLflow's → a slip → a cut → observed runs → deliverables → the report →
close → the next campaign) and, after every step, reads each surface and checks that it states
the timeline's hours: the timeline endpoint, the campaign page's headline and Gantt, the
forecast API, the lot advice, the hardware options' fit, the commit page (while a draft), the
closing report (HTML, Markdown, JSON) and the next campaign's forecast."""

from __future__ import annotations

import html
import itertools
import re
from decimal import Decimal
from typing import Any

from django.test import Client, TransactionTestCase
from django.urls import reverse
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from campaigns.models import Team
from campaigns.tests.factories import (
    as_key,
    as_user,
    celery_eager,
    deliverable_body,
    make_user,
)
from catalog.models import RentalPlan
from catalog.services import seed_catalog

COUNTER = itertools.count(1)
HOURS = st.decimals(min_value=1, max_value=20, places=1)
SLIP = st.decimals(min_value=1, max_value=30, places=1)
ITEMS = (
    ("Baseline", "baseline", "mandatory"),
    ("LoRA r8", "variant", "useful"),
    ("LoRA r16", "variant", "exploratory"),
)


def two(value: Any) -> str:
    """Hours as the timeline writes them, from a float or a string."""
    return f"{Decimal(str(value)):.2f}"


def short(value: Any) -> str:
    """Hours as the Gantt's label writes them (to the tenth, trailing zeros dropped)."""
    text = f"{float(value):.1f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


class OneTimeline(RuleBasedStateMachine):
    # ------------------------------------------------------------------ plan

    @initialize(hours=st.lists(HOURS, min_size=5, max_size=5))
    def plan(self, hours: list[Decimal]) -> None:
        n = next(COUNTER)
        self.team = Team.objects.create(name=f"timeline-{n}")
        self.owner = make_user(f"tl-owner-{n}", team=self.team, role="owner")
        self.api = as_user(self.owner)
        self.web = Client()
        self.web.force_login(self.owner)
        self.phase = "draft"
        self.runs = 0
        self.clone_id: int | None = None
        body = {
            "title": f"Seed {n}",
            "question": "Does a LoRA variant beat the baseline by 1 F1?",
            "corpus": {"name": "tickets", "revision": "abc123"},
            "window_hours": "72",
            "budget": "200.00",
            "currency": "USD",
            "team": self.team.pk,
        }
        self.id = self.send("post", "/api/v1/campaigns/", body, 201)["id"]
        base = f"/api/v1/campaigns/{self.id}"
        self.items = {}
        for (name, role, tier), planned in zip(ITEMS, hours[2:], strict=True):
            row = {
                "name": name,
                "role": role,
                "tier": tier,
                "planned_hours": str(planned),
                "config": {"lora_rank": len(name)},
            }
            self.items[name] = self.send("post", f"{base}/variants/", row, 201)["id"]
        stage = {"machine": True, "resource": "rtx4090-a"}
        setup = self.send(
            "post",
            f"{base}/stages/",
            {**stage, "name": "Setup", "kind": "setup", "planned_hours": str(hours[0])},
            201,
        )
        loading = self.send(
            "post",
            f"{base}/stages/",
            {
                **stage,
                "name": "Loading",
                "kind": "loading",
                "planned_hours": str(hours[1]),
                "depends_on": [setup["id"]],
            },
            201,
        )
        self.stages = {"Setup": setup["id"], "Loading": loading["id"]}
        trained = []
        for name, item in self.items.items():
            row = self.send(
                "post",
                f"{base}/stages/",
                {
                    **stage,
                    "name": f"Train {name}",
                    "kind": "training",
                    "variant": item,
                    "planned_hours": str(hours[2 + len(trained)]),
                    "depends_on": [loading["id"]],
                },
                201,
            )
            trained.append(row["id"])
        self.send(
            "post",
            f"{base}/stages/",
            {
                **stage,
                "name": "Retrieval",
                "kind": "retrieval",
                "planned_hours": "2",
                "depends_on": trained,
            },
            201,
        )
        self.send("post", f"{base}/stop-rules/", {"kind": "non_finite_loss", "metric": "loss"}, 201)
        lot = RentalPlan.objects.get(provider="IteraGPU", name="RTX 4090, 3 days")
        self.send("post", f"{base}/lots/", {"plan": lot.pk, "quantity": 1}, 201)

    def send(
        self, method: str, url: str, body: Any = None, expect: int = 200, client: Any = None
    ) -> Any:
        answer = getattr(client or self.api, method)(url, body, format="json")
        assert answer.status_code == expect, (url, answer.status_code, answer.content[:400])
        return answer.json() if answer.content else None

    # ------------------------------------------------------------------ steps

    @precondition(lambda self: self.phase == "draft")
    @rule()
    def commit(self) -> None:
        self.check_commit_page()
        self.send("post", f"/api/v1/campaigns/{self.id}/commit/", {})
        self.phase = "committed"
        key = self.send("post", f"/api/v1/campaigns/{self.id}/ingest-keys/", {}, 201)
        self.loop = as_key(key["key"])

    def live_items(self) -> list[int]:
        answer = self.send("get", f"/api/v1/campaigns/{self.id}/variants/")
        rows = answer["results"] if isinstance(answer, dict) else answer
        return [r["id"] for r in rows if r["status"] != "cut"]

    def new_run(self, item: int, kind: str) -> str:
        self.runs += 1
        run_id = f"c{self.id}-{kind}-{self.runs}"
        self.send(
            "post",
            f"/api/v1/campaigns/{self.id}/runs/",
            {"run_id": run_id, "variant": item, "kind": kind, "config": {"n": self.runs}},
            201,
            self.loop,
        )
        return run_id

    @precondition(lambda self: self.phase in ("committed", "running"))
    @rule(
        pick=st.integers(0, 2), hours=st.decimals("0.2", "2", places=2), rate=st.integers(200, 5000)
    )
    def pilot_from_the_client(self, pick: int, hours: Decimal, rate: int) -> None:
        items = self.live_items()
        run_id = self.new_run(items[pick % len(items)], "pilot")
        self.send(
            "post",
            f"/api/v1/runs/{run_id}/throughput/",
            {"tokens_per_second": rate, "gpus": 1, "measured_seconds": 60},
            201,
            self.loop,
        )
        self.send(
            "post",
            f"/api/v1/runs/{run_id}/finish/",
            {"status": "completed", "observed_hours": str(hours)},
            200,
            self.loop,
        )
        self.phase = "running"

    @precondition(lambda self: self.phase in ("committed", "running"))
    @rule(pick=st.integers(0, 2))
    def pilot_from_mlflow(self, pick: int) -> None:
        items = self.live_items()
        mlflow = "/mlflow/api/2.0/mlflow"
        run = self.send(
            "post",
            f"{mlflow}/runs/create",
            {
                "experiment_id": str(self.id),
                "run_name": f"mlflow-pilot-{self.runs}",
                "tags": [
                    {"key": "desk.variant", "value": str(items[pick % len(items)])},
                    {"key": "desk.kind", "value": "pilot"},
                ],
            },
            200,
            self.loop,
        )["run"]
        self.runs += 1
        run_id = run["info"]["run_id"]
        self.send(
            "post",
            f"{mlflow}/runs/log-batch",
            {
                "run_id": run_id,
                "metrics": [
                    {"key": "loss", "value": 2.0, "step": 1, "timestamp": 1_700_000_000_000}
                ],
            },
            200,
            self.loop,
        )
        self.send(
            "post",
            f"{mlflow}/runs/update",
            {"run_id": run_id, "status": "FINISHED"},
            200,
            self.loop,
        )
        self.phase = "running"

    @precondition(lambda self: self.phase in ("committed", "running"))
    @rule(which=st.sampled_from(["Setup", "Loading"]), extra=SLIP)
    def slip(self, which: str, extra: Decimal) -> None:
        stage = self.send("get", f"/api/v1/campaigns/{self.id}/stages/{self.stages[which]}/")
        hours = Decimal(stage["planned_hours"]) + extra
        self.send(
            "post",
            f"/api/v1/campaigns/{self.id}/stages/{self.stages[which]}/observed/",
            {"observed_hours": str(hours), "deviation_note": "the machine was slow"},
        )

    @precondition(lambda self: self.phase in ("committed", "running"))
    @rule(which=st.sampled_from(["LoRA r8", "LoRA r16"]))
    def cut(self, which: str) -> None:
        if self.items[which] not in self.live_items():
            return
        self.send(
            "post",
            f"/api/v1/campaigns/{self.id}/decisions/",
            {
                "outcome": "cut",
                "rationale": "the pilot says it will not pay",
                "cut_variants": [self.items[which]],
            },
            201,
        )

    @precondition(lambda self: self.phase in ("committed", "running"))
    @rule(pick=st.integers(0, 2), hours=st.decimals(1, 30, places=2))
    def observe_a_full_run(self, pick: int, hours: Decimal) -> None:
        items = self.live_items()
        run_id = self.new_run(items[pick % len(items)], "full")
        self.send(
            "post",
            f"/api/v1/runs/{run_id}/finish/",
            {"status": "completed", "observed_hours": str(hours)},
            200,
            self.loop,
        )
        self.phase = "running"
        self.full_run = run_id

    @precondition(lambda self: self.phase == "running" and hasattr(self, "full_run"))
    @rule(corpus=st.sampled_from(["tickets-a", "tickets-b"]))
    def deliver(self, corpus: str) -> None:
        self.send(
            "post",
            f"/api/v1/campaigns/{self.id}/deliverables/",
            deliverable_body(corpus=corpus, run=self.full_run),
            201,
        )

    @precondition(lambda self: self.phase in ("committed", "running", "closed"))
    @rule()
    def report(self) -> None:
        self.send("post", f"/api/v1/campaigns/{self.id}/reports/", {}, 202)

    @precondition(lambda self: self.phase in ("committed", "running"))
    @rule()
    def close(self) -> None:
        self.send(
            "post",
            f"/api/v1/campaigns/{self.id}/close/",
            {"conclusion": "No variant beats the baseline by 1 F1."},
        )
        self.phase = "closed"

    @precondition(lambda self: self.phase == "closed" and self.clone_id is None)
    @rule()
    def plan_the_next_campaign(self) -> None:
        self.clone_id = self.send("post", f"/api/v1/campaigns/{self.id}/clone/", {}, 201)["id"]

    # ------------------------------------------------------------------ every surface

    @invariant()
    def every_surface_states_the_timelines_hours(self) -> None:
        if not hasattr(self, "id"):
            return
        for campaign in filter(None, (self.id, self.clone_id)):
            timeline = self.send("get", f"/api/v1/campaigns/{campaign}/timeline/")
            self.check_page(campaign, timeline)
            self.check_forecast(campaign, timeline)
            self.check_hardware_options(campaign, timeline)
        if self.phase != "draft":
            self.check_reports(self.send("get", f"/api/v1/campaigns/{self.id}/timeline/"))

    def check_page(self, campaign: int, timeline: dict[str, Any]) -> None:
        page = self.web.get(reverse("admin:campaigns_campaign_change", args=[campaign]))
        text = html.unescape(page.content.decode())
        headline = re.search(r'<p id="summary-headline"[^>]*><strong>(.*?)</strong>', text, re.S)
        assert headline and headline.group(1) == timeline["headline"]
        label = (
            f"calendar: {short(timeline['forecast_hours'])} h of a "
            f"{short(timeline['window_hours'])} h window"
        )
        found = re.findall(r'aria-label="(calendar:[^"]*)"', text)
        assert f'aria-label="{label}' in text, (label, found, timeline)
        for warning in timeline["warnings"]:
            assert warning["message"] in text, warning

    def check_forecast(self, campaign: int, timeline: dict[str, Any]) -> None:
        forecast = self.send("get", f"/api/v1/campaigns/{campaign}/forecast/")
        assert forecast["status"] == "fresh", forecast["status"]
        totals = forecast["totals"]
        assert two(totals["forecast_hours"]) == timeline["forecast_hours"]
        assert two(totals["reserved_hours"]) == timeline["planned_hours"]
        assert two(totals["observed_hours"]) == (timeline["observed_hours"] or "0.00")
        assert forecast["advice"][0] == timeline["headline"]
        # The lot advice holds the timeline's machine time.
        assert two(forecast["figures"]["machine_hours"]) == timeline["machine_hours"]
        assert forecast["fits_in_window"] == timeline["fits_in_window"]

    def check_hardware_options(self, campaign: int, timeline: dict[str, Any]) -> None:
        options = self.send("get", f"/api/v1/campaigns/{campaign}/hardware-options/")
        mine = [o for o in options["options"] if o["gpu"] == "RTX-4090"]
        assert mine, "the reserved GPU is an option"
        assert mine[0]["fits_window"] == timeline["fits_in_window"]

    def check_commit_page(self) -> None:
        timeline = self.send("get", f"/api/v1/campaigns/{self.id}/timeline/")
        page = self.web.get(reverse("admin:campaigns_campaign_commit", args=[self.id]))
        text = html.unescape(page.content.decode())
        assert timeline["headline"] in text
        for warning in timeline["warnings"]:
            assert warning["message"] in text

    def check_reports(self, timeline: dict[str, Any]) -> None:
        reports = self.send("get", f"/api/v1/campaigns/{self.id}/reports/")
        rows = reports["results"] if isinstance(reports, dict) else reports
        ready = [r for r in rows if r["status"] == "ready"]
        if not ready:
            return
        # A report states the hours of the moment it was built: rebuild it now.
        self.send("post", f"/api/v1/campaigns/{self.id}/reports/", {}, 202)
        rows = self.send("get", f"/api/v1/campaigns/{self.id}/reports/")
        latest = (rows["results"] if isinstance(rows, dict) else rows)[0]
        body = self.send("get", f"/api/v1/reports/{latest['id']}/json/")
        section = body["timeline"]
        for key in ("planned_hours", "forecast_hours", "observed_hours", "slack_hours"):
            assert section[key] == timeline[key], key
        for rendering in ("html", "markdown"):
            answer = self.api.get(f"/api/v1/reports/{latest['id']}/{rendering}/")
            assert html.unescape(answer.content.decode()).count(timeline["headline"]) >= 1


class EverySurfaceStatesTheSameHours(TransactionTestCase):
    """Real commits (not a test transaction): the forecast's recompute is enqueued when each
    request's transaction commits, and runs inline, as the embedded shape runs it."""

    def setUp(self) -> None:
        if not RentalPlan.objects.filter(provider="IteraGPU", name="RTX 4090, 3 days").exists():
            seed_catalog()

    def test_a_random_campaign_walked_end_to_end(self) -> None:
        with celery_eager():
            run_state_machine_as_test(
                OneTimeline,
                settings=settings(
                    max_examples=3,
                    stateful_step_count=12,
                    deadline=None,
                    derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
                ),
            )

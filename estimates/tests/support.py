"""Shared test data and helpers for the estimates' Django tests."""

from __future__ import annotations

from decimal import Decimal
from io import StringIO
from typing import Any

from django.core.management import call_command
from django.db import transaction
from hypothesis import HealthCheck, settings

from campaigns.models import Campaign, PlannedItem, Stage, Team
from campaigns.tests.factories import make_user, token_header
from catalog.services import seed_catalog

PREVIEW = "/api/v1/estimates/preview/"
OPTIONS = "/api/v1/estimates/hardware-options/"
# The fuzzing budget of the "no 500 for any finite input" tests: each example is a request.
FUZZ = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

# The body of docs/api.md's example.
API_EXAMPLE: dict[str, Any] = {
    "model": {
        "parameters": 7e9,
        "layers": 32,
        "hidden_size": 4096,
        "attention_heads": 32,
        "vocab_size": 32000,
    },
    "training": {
        "tokens": 1e12,
        "epochs": 1,
        "sequence_length": 4096,
        "micro_batch_size": 1,
        "precision": "bf16",
        "optimizer": "adamw",
        "activation_checkpointing": False,
    },
    "hardware": {
        "gpu": "A100-80GB",
        "count": 8,
        "utilization": 0.4,
        "zero_stage": 0,
        "tensor_parallel": 1,
        "pipeline_parallel": 1,
    },
    "pilot": {"tokens_per_second": 25000, "gpus": 8},
    "cost": {"hourly_rate_per_gpu": "1.50", "currency": "USD", "extra": "0.00"},
}


class AsPlanner:
    """TestCase mixin: the seeded catalog and a planner of their own team posting JSON to the
    estimates API, and the check every "no 500" test makes of an answer."""

    planner: Any
    client: Any

    @classmethod
    def setUpTestData(cls) -> None:
        super().setUpTestData()  # type: ignore[misc]
        seed_catalog()
        team = Team.objects.create(name=cls.__name__)
        cls.planner = make_user(cls.__name__.lower()[:30], team=team, role="planner")

    def post(self, body: Any, url: str = PREVIEW) -> Any:
        return self.client.post(
            url, body, content_type="application/json", **token_header(self.planner)
        )

    def assert_200_or_a_400_naming_what_was_sent(self, answer: Any, body: dict[str, Any]) -> None:
        """No 500: a 200, or a 400 whose errors name only sections and fields of ``body``."""
        test: Any = self
        test.assertIn(answer.status_code, (200, 400), answer.content)
        if answer.status_code != 400:
            return
        for section, errors in answer.json().items():
            test.assertIn(section, body)
            if isinstance(errors, dict) and isinstance(body[section], dict):
                test.assertLessEqual(set(errors), set(body[section]), errors)


class OnTheDemoCampaign:
    """TestCase mixin: the seeded catalog, the demo campaign (``load_seed``) and its owner."""

    campaign: Any
    owner: Any

    @classmethod
    def setUpTestData(cls) -> None:
        super().setUpTestData()  # type: ignore[misc]
        seed_catalog()
        cls.campaign = load_seed()
        cls.owner = cls.campaign.team.memberships.filter(role="owner").first().user


class CommittedTestData:
    """TestCase mixin: setUpTestData's transaction never commits, so the recomputes it queued
    stay pending in every test and would mix with the tests' own. Dropping them models the
    setup having committed."""

    def setUp(self) -> None:
        from campaigns.enqueue import OnCommitEnqueue
        from estimates.tasks import recompute_forecast

        connection = transaction.get_connection()
        connection.run_on_commit = [
            entry
            for entry in connection.run_on_commit
            if not (
                isinstance(entry[1], OnCommitEnqueue)
                and entry[1].task.name == recompute_forecast.name
            )
        ]
        super().setUp()  # type: ignore[misc]


def load_seed() -> Campaign:
    """The demo campaign (docs/domain.md §7): 48 sequential hours on one RTX 4090, 72 h window."""
    call_command("load_demo", stdout=StringIO())
    return Campaign.objects.get(team__name="demo")


def grow_seed_by_30_hours_with_an_exploratory_item(campaign: Campaign) -> PlannedItem:
    """The growth of docs/domain.md §7: +18 h on the baseline and a 12 h exploratory X."""
    x = PlannedItem.objects.create(
        campaign=campaign,
        name="X",
        role="other",
        tier="exploratory",
        planned_hours=Decimal("12"),
        gpu="RTX-4090",
    )
    last = campaign.stages.get(name="Retrieve results")
    train_x = Stage.objects.create(
        campaign=campaign,
        name="Train X",
        kind="training",
        machine=True,
        resource="rtx4090-a",
        planned_hours=Decimal("12"),
        variant=x,
    )
    train_x.depends_on.add(last)
    baseline = campaign.stages.get(name="Train baseline")
    baseline.planned_hours = Decimal("28")
    baseline.save()
    return x

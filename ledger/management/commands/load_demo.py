"""`manage.py load_demo`: the demo team, its owner `demo` and the domain's illustrative campaign
(docs/domain.md §7), idempotent. It lives in the top layer because the demo reserves a lot from
the rental catalog, and it plans through campaigns/services like any user (the team and its
owner through campaigns/services/teams.py)."""

from __future__ import annotations

import os
import secrets
from decimal import Decimal
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction

from campaigns.models import Campaign, PlannedItem, Role, Stage, Team
from campaigns.services import teams
from campaigns.services.campaigns import create_campaign
from campaigns.services.decisions import plan_decision_point
from campaigns.services.items import create_item
from campaigns.services.lots import reserve_lot
from campaigns.services.stages import add_stage
from campaigns.services.stop_rules import add_stop_rule
from catalog.models import RentalPlan
from catalog.services import seed_catalog
from ledger.management.demo_history import HISTORY, load_past_campaign

DEMO_TITLE = "Baseline vs two variants on a fixed corpus"
VARIANT_RATIONALE = "Only a gain of at least the threshold over the baseline changes the choice."

# The domain's illustrative calendar (docs/domain.md §7): 48 sequential hours on one RTX 4090,
# from the start of preparation to the retrieval of results, inside a 72-hour window.
# The training items state their work and the throughput assumed before any pilot: 72 M tokens at
# 2,000 tokens/s is the planned 10 h, and a logged pilot throughput replaces the assumption.
WORK = {"tokens": 72_000_000, "assumed_tokens_per_second": 2000}
ITEMS = [
    ("Baseline (testigo)", "baseline", "mandatory", 10, 1, {"lora_rank": 0, "lr": 2e-5, **WORK}),
    (
        "Variant A: LoRA rank 16",
        "variant",
        "mandatory",
        10,
        1,
        {"lora_rank": 16, "lr": 2e-4, **WORK},
    ),
    ("Variant B: LoRA rank 64", "variant", "useful", 10, 1, {"lora_rank": 64, "lr": 2e-4, **WORK}),
    ("Data check", "data_check", "mandatory", 1, 1, {}),
    ("Resume check", "resume_check", "mandatory", 2, 0.5, {}),
]


# h17 (issue 17): the LoRA items carry their estimate spec (the preview's objects, docs/domain.md
# §24.9): Llama 3.1 8B's shape with LoRA on every linear layer, as the forecast and the
# campaign's hardware options read it (it fits the RTX 4090: about 17 GiB per device).
def _lora_spec(rank: int) -> dict[str, Any]:
    return {
        "model": {
            "parameters": 8.03e9,
            "layers": 32,
            "hidden_size": 4096,
            "attention_heads": 32,
            "key_value_heads": 8,
            "intermediate_size": 14336,
            "vocab_size": 128256,
        },
        "training": {
            "sequence_length": 2048,
            "micro_batch_size": 2,
            "method": "lora",
            "lora": {"rank": rank, "target_modules": "all-linear"},
            "activation_checkpointing": True,
            "chunked_loss": True,
        },
        "hardware": {"gpu": "RTX-4090"},
    }


SPECS = {"Variant A: LoRA rank 16": _lora_spec(16), "Variant B: LoRA rank 64": _lora_spec(64)}
STOP_RULES: list[dict[str, Any]] = [
    {
        "kind": "non_finite_loss",
        "metric": "loss",
        "description": "Stop at the first NaN or infinite loss.",
    },
    {
        "kind": "metric_threshold",
        "metric": "val_f1",
        "comparator": "lt",
        "threshold": 0.2,
        "description": "Pilot validation F1 below 0.2: the setup is broken.",
    },
    {
        "kind": "input_truncated",
        "metric": "input_truncated",
        "description": "An essential input was truncated.",
    },
    {
        "kind": "no_usable_resume",
        "description": "A checkpoint that cannot be reloaded in a new process stops the run.",
    },
]
STAGES = [
    ("Install environment", "setup", 2, None),
    ("Load corpus", "loading", 2, None),
    ("Check the data", "validation", 1, "Data check"),
    ("Pilot", "pilot", 3, None),
    ("Train baseline", "training", 10, "Baseline (testigo)"),
    ("Train variant A", "training", 10, "Variant A: LoRA rank 16"),
    ("Train variant B", "training", 10, "Variant B: LoRA rank 64"),
    ("Validate", "validation", 3, None),
    ("Predict on the test split", "inference", 3, None),
    ("Write outputs", "outputs", 1, None),
    ("Checkpoint write and restore in a new process", "checkpoint_io", 2, "Resume check"),
    ("Retrieve results", "retrieval", 1, None),
]


class Command(BaseCommand):
    help = "Load the demo team, its owner user `demo` and the seed campaign (idempotent)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--history",
            action="store_true",
            help="Also load three earlier campaigns of the team, closed with their runs, curves, "
            "observed hours, deliverables, ledger entries and closing reports: the demo forecast "
            "is then calibrated by them (docs/domain.md §18, §20, §21).",
        )

    @transaction.atomic
    def handle(self, *args: Any, **options: Any) -> None:
        seed_catalog()
        user = self.demo_user()
        team, _ = teams.ensure_team(name="demo", acting_user=user)
        teams.set_member(team=team, member=user, role=Role.OWNER, acting_user=user)
        if options.get("history"):
            self.load_history(team, user)
        campaign = Campaign.objects.filter(team=team, title=DEMO_TITLE).first()
        if campaign is not None:
            self.stdout.write(f"Demo campaign already loaded (id {campaign.pk}).")
            return
        campaign = load_demo_campaign(team, user)
        self.stdout.write(f"Loaded the demo campaign (id {campaign.pk}): 48 h in a 72 h window.")

    def demo_user(self) -> Any:
        """The owner `demo`: a new one gets DEMO_PASSWORD or a generated password shown once;
        an existing one keeps its password unless DEMO_PASSWORD is set."""
        from_env = os.environ.get("DEMO_PASSWORD") or None
        exists = get_user_model().objects.filter(username="demo").exists()
        password = from_env if exists else (from_env or secrets.token_urlsafe(12))
        user, _created = teams.provision_user(username="demo", password=password)
        if not exists:
            shown = "from DEMO_PASSWORD" if from_env else password
            self.stdout.write(f"Created user demo, password: {shown} (shown once)")
        elif from_env:
            self.stdout.write("User demo exists; password reset from DEMO_PASSWORD.")
        else:
            self.stdout.write("User demo exists; its password is unchanged.")
        return user

    def load_history(self, team: Team, user: Any) -> None:
        """Three earlier campaigns of the team, closed: runs with curves, observed hours,
        deliverables, ledger entries and a closing report each (demo_history.py). Their RTX 4090
        training stages took longer than planned, so the team's calibration (docs/domain.md §20)
        applies to the demo campaign's forecast (time source `calibrated`)."""
        for past in HISTORY:
            campaign, created = load_past_campaign(team, user, past)
            if created:
                self.stdout.write(f"Loaded the earlier campaign {past.title!r} (id {campaign.pk}).")


def load_demo_campaign(team: Team, user: Any) -> Campaign:
    """The domain's illustrative campaign (docs/domain.md §7), through the same write path as
    the admin and the API (campaigns/services)."""
    campaign = create_campaign(
        acting_user=user,
        team=team,
        title=DEMO_TITLE,
        question=(
            "Does variant A or variant B beat the baseline on the fixed corpus by at "
            "least 1.0 macro-F1? A negative answer closes the campaign too."
        ),
        corpus_name="support-tickets-es",
        corpus_revision="sha256:9f2c4e1b7a",
        expected_deliverables=(
            "Predictions on the test split, an error analysis, a reloadable artifact."
        ),
        decision_threshold="+1.0 macro-F1 over the baseline",
        window_hours=Decimal("72"),
        budget=Decimal("110.00"),
        currency="USD",
    )
    items = _plan_items(campaign, user)
    for rule in STOP_RULES:
        add_stop_rule(campaign=campaign, acting_user=user, **rule)
    _plan_stages(campaign, user, items)
    plan_decision_point(campaign=campaign, acting_user=user, label="after the pilot")
    plan = RentalPlan.objects.get(provider="IteraGPU", name="RTX 4090, 3 days")
    reserve_lot(campaign=campaign, acting_user=user, plan=plan, quantity=1)
    return campaign


def _plan_items(campaign: Campaign, user: Any) -> dict[str, PlannedItem]:
    items = {}
    for name, role, tier, hours, prep, config in ITEMS:
        items[name] = create_item(
            campaign=campaign,
            acting_user=user,
            name=name,
            role=role,
            tier=tier,
            planned_hours=Decimal(str(hours)),
            prep_hours=Decimal(str(prep)),
            config=config,
            gpu="RTX-4090",
            rationale=VARIANT_RATIONALE if role == "variant" else "",
            estimate_spec=SPECS.get(name),
        )
    return items


def _plan_stages(campaign: Campaign, user: Any, items: dict[str, PlannedItem]) -> None:
    """The human preparation, then the machine stages one after another on one RTX 4090."""
    add_stage(
        campaign=campaign,
        acting_user=user,
        name="Prepare configs and scripts",
        kind="human_prep",
        machine=False,
        resource="",
        planned_hours=Decimal("4"),
    )
    previous: Stage | None = None
    for name, kind, stage_hours, item_name in STAGES:
        previous = add_stage(
            campaign=campaign,
            acting_user=user,
            depends_on=[previous] if previous is not None else [],
            name=name,
            kind=kind,
            machine=True,
            resource="rtx4090-a",
            planned_hours=Decimal(str(stage_hours)),
            variant=items.get(item_name) if item_name else None,
        )

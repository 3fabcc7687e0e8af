"""The next campaign keeps every field of its predecessor's plan (docs/domain.md §21): each
field of the campaign, every item, stage, stop rule and lot, read from the models' own field
lists, compared one by one, and the clone takes the services' checks."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.core.exceptions import ValidationError
from django.db import models
from django.test import TestCase

from campaigns.models import (
    WORK_FIELDS,
    Campaign,
    LotReservation,
    PlannedItem,
    Stage,
    StopRule,
    Team,
)
from campaigns.tests.factories import make_campaign, make_user
from catalog.models import RentalPlan
from catalog.services import seed_catalog
from estimates.services import clone_campaign

# What the clone is not expected to copy (new rows, the clone's own state, what happened).
NOT_EXPECTED = {
    Campaign: {
        "id",
        "title",
        "status",
        "conclusion",
        "inherited_uncertainties",
        "planned_from",
        "created_by",
        "created_at",
        "updated_at",
        "committed_at",
        "committed_by",
        "closed_at",
        "closed_by",
    },
    PlannedItem: {"id", "campaign", "status", "calibrated_from"},
    Stage: {
        "id",
        "campaign",
        "variant",
        "observed_hours",
        "deviation_note",
        "observed_at",
        "observed_reason",
        "calibrated_from",
    },
    StopRule: {"id", "campaign", "created_at"},
    LotReservation: {"id", "campaign", "start"},
}


def compared(model: type[models.Model]) -> list[str]:
    return [f.attname for f in model._meta.concrete_fields if f.name not in NOT_EXPECTED[model]]


def fields_of(row: models.Model) -> dict[str, Any]:
    return {name: getattr(row, name) for name in compared(type(row))}


class CloneKeepsEveryField(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        seed_catalog()
        cls.team = Team.objects.create(name="nlp")
        cls.user = make_user("pia", team=cls.team)
        cls.source = make_campaign(
            cls.team,
            expected_deliverables="predictions on the test split",
            decision_threshold="+1 F1",
            hourly_rate_per_gpu=Decimal("1.90"),
            required_checkpoint_components=["model", "optimizer"],
        )
        work = {
            "tokens": 3_600_000_000,
            "samples": 1_200_000,
            "tokens_per_sample": 3000,
            "epochs": 2.5,
            "assumed_tokens_per_second": 12_000.0,
            "assumed_samples_per_second": 4.0,
            "gpus": 8,
        }
        cls.base = PlannedItem.objects.create(
            campaign=cls.source,
            name="baseline",
            role="baseline",
            tier="mandatory",
            planned_hours=Decimal("10.50"),
            prep_hours=Decimal("1.25"),
            rationale="the reference",
            gpu="H100",
            config={"lr": 1e-4, "parameters": 7e9},
            **work,
        )
        cls.variant = PlannedItem.objects.create(
            campaign=cls.source,
            name="variant A",
            role="variant",
            tier="useful",
            planned_hours=Decimal("12"),
            gpu="RTX-4090",
            config={"lr": 2e-4},
            tokens=1_000_000,
            epochs=1.0,
        )
        setup = Stage.objects.create(
            campaign=cls.source,
            name="setup",
            kind="setup",
            machine=False,
            resource="",
            planned_hours=Decimal("0.50"),
        )
        train = Stage.objects.create(
            campaign=cls.source,
            name="train",
            kind="training",
            machine=True,
            resource="gpu-a",
            variant=cls.base,
            planned_hours=Decimal("22"),
        )
        train.depends_on.set([setup])
        validate = Stage.objects.create(
            campaign=cls.source,
            name="validate",
            kind="validation",
            machine=True,
            resource="gpu-a",
            variant=cls.variant,
            planned_hours=Decimal("3"),
        )
        validate.depends_on.set([train, setup])
        StopRule.objects.create(campaign=cls.source, kind="non_finite_loss", metric="loss")
        StopRule.objects.create(
            campaign=cls.source,
            kind="metric_threshold",
            metric="val/f1",
            comparator="lt",
            threshold=0.42,
            description="stop when F1 falls under 0.42",
        )
        plans = list(RentalPlan.objects.filter(currency="USD").order_by("id")[:2])
        for n, plan in enumerate(plans, start=1):
            LotReservation.objects.create(campaign=cls.source, plan=plan, quantity=n)

    def test_every_field_of_every_row_is_copied(self) -> None:
        clone = clone_campaign(campaign=self.source, acting_user=self.user)
        self.assertEqual(fields_of(clone), fields_of(self.source))
        self.assertEqual((clone.status, clone.planned_from_id), ("draft", self.source.pk))
        self.assertEqual(clone.title, f"{self.source.title} (next)")
        for model, related in (
            (PlannedItem, "items"),
            (Stage, "stages"),
            (StopRule, "stop_rules"),
            (LotReservation, "lots"),
        ):
            with self.subTest(model=model.__name__):
                source_rows = list(getattr(self.source, related).order_by("id"))
                clone_rows = list(getattr(clone, related).order_by("id"))
                self.assertEqual(len(clone_rows), len(source_rows))
                self.assertTrue(source_rows)
                for a, b in zip(source_rows, clone_rows, strict=True):
                    self.assertEqual(fields_of(b), fields_of(a))

    def test_each_figure_says_where_it_came_from(self) -> None:
        # Nothing of the source was observed: every figure is kept, saying so (§21).
        clone = clone_campaign(campaign=self.source, acting_user=self.user)
        for row in (*clone.items.order_by("id"), *clone.stages.order_by("id")):
            lesson = row.calibrated_from
            self.assertEqual((lesson["ratio"], lesson["source"]), (None, "none"), row.name)
            self.assertEqual(lesson["planned_before"], lesson["hours"])
            self.assertEqual(lesson["from_campaign"]["id"], self.source.pk)

    def test_the_work_fields_survive(self) -> None:
        clone = clone_campaign(campaign=self.source, acting_user=self.user)
        item = clone.items.get(name="baseline")
        for name in WORK_FIELDS:
            self.assertEqual(getattr(item, name), getattr(self.base, name), name)
        self.assertEqual(item.config, self.base.config)

    def test_stages_keep_their_items_and_dependencies(self) -> None:
        clone = clone_campaign(campaign=self.source, acting_user=self.user)
        by_name = {s.name: s for s in clone.stages.all()}
        self.assertEqual(by_name["train"].variant, clone.items.get(name="baseline"))
        self.assertEqual(by_name["validate"].variant, clone.items.get(name="variant A"))
        self.assertIsNone(by_name["setup"].variant)
        self.assertEqual(
            sorted(s.name for s in by_name["validate"].depends_on.all()), ["setup", "train"]
        )
        self.assertEqual([s.name for s in by_name["train"].depends_on.all()], ["setup"])
        self.assertFalse(by_name["setup"].depends_on.exists())

    def test_the_service_lists_the_same_exclusions_with_a_reason_each(self) -> None:
        from estimates.services import NOT_COPIED

        self.assertEqual({m: set(f) for m, f in NOT_COPIED.items()}, NOT_EXPECTED)
        self.assertTrue(all(reason for f in NOT_COPIED.values() for reason in f.values()))
        self.assertFalse(set(WORK_FIELDS) & set(NOT_COPIED[PlannedItem]))

    def test_the_clone_takes_the_services_checks(self) -> None:
        # A value the item service refuses is refused in the clone too (nothing is written).
        PlannedItem.objects.filter(pk=self.variant.pk).update(epochs=0)
        before = Campaign.objects.count()
        with self.assertRaises(ValidationError) as refused:
            clone_campaign(campaign=self.source, acting_user=self.user)
        self.assertIn("epochs", refused.exception.message_dict)
        self.assertEqual(Campaign.objects.count(), before)

"""An item's work as fields (docs/domain.md §10): migrated from config keys, validated, read by
the forecast."""

from __future__ import annotations

import importlib
from decimal import Decimal

from django.apps import apps as django_apps
from django.test import TestCase

from campaigns.models import PlannedItem, Team, ThroughputSample
from campaigns.tests.factories import as_user, make_plannable, make_user, post
from estimates.forecasts import _pilot_hours

migration = importlib.import_module("campaigns.migrations.0006_item_work_fields")


class ItemWork(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.owner = make_user("olga", team=cls.team, role="owner")
        cls.campaign = make_plannable(cls.team)

    def test_the_migration_moves_usable_config_keys_into_the_fields(self) -> None:
        item = self.campaign.items.get(name="variant A")
        PlannedItem.objects.filter(pk=item.pk).update(
            config={"lr": 2e-4, "tokens": 72_000_000, "epochs": 2, "gpus": 1.5, "samples": "many"}
        )
        migration.config_keys_to_fields(django_apps, None)
        item.refresh_from_db()
        self.assertEqual((item.tokens, item.epochs), (72_000_000, 2.0))
        self.assertIsNone(item.gpus)  # half a GPU is not a count: it stays in the config
        self.assertEqual(item.config, {"lr": 2e-4, "gpus": 1.5, "samples": "many"})
        migration.fields_to_config_keys(django_apps, None)
        item.refresh_from_db()
        self.assertEqual(item.config["tokens"], 72_000_000)

    def test_the_api_takes_the_work_as_fields_and_refuses_a_zero_or_nan_naming_the_field(
        self,
    ) -> None:
        api = as_user(self.owner)
        url = f"/api/v1/campaigns/{self.campaign.pk}/variants/"
        ok = post(
            api,
            url,
            {"name": "C", "tokens": 1000, "epochs": 2, "assumed_tokens_per_second": 50, "gpus": 2},
        )
        self.assertEqual(ok.status_code, 201, ok.content)
        self.assertEqual(ok.json()["assumed_tokens_per_second"], 50.0)
        for field, bad in (("epochs", 0), ("assumed_tokens_per_second", "NaN"), ("gpus", 0)):
            refused = post(api, url, {"name": f"bad {field}", field: bad})
            self.assertEqual(refused.status_code, 400, (field, refused.content))
            self.assertIn(field, refused.json())

    def test_the_forecast_reads_the_fields(self) -> None:
        item = PlannedItem(
            campaign=self.campaign,
            name="x",
            planned_hours=Decimal("10"),
            tokens=3_600_000,
            epochs=1,
            gpus=1,
        )
        sample = ThroughputSample(tokens_per_second=100.0, gpus=1)
        hours, note = _pilot_hours(item, sample)
        self.assertAlmostEqual(hours or 0, 10.0)
        self.assertIn("the pilot measured 100 tokens/s", note)

    def test_the_admin_work_form_refuses_zero_epochs_naming_the_field(self) -> None:
        from campaigns.admin import ItemWorkForm

        item = self.campaign.items.get(name="baseline")
        form = type("Bound", (ItemWorkForm,), {"parent_campaign": self.campaign})(
            data={"epochs": "0", "gpus": "2"}, instance=item
        )
        self.assertFalse(form.is_valid())
        self.assertIn("epochs", form.errors)
        self.assertNotIn("gpus", form.errors)

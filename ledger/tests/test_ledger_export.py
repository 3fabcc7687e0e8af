"""The FOCUS export of a team's ledger (docs/exports.md), on the real database: its rows sum to
the ledger's totals per campaign and period, its columns are the published FOCUS 1.2 list, a
prepaid lot is a purchase (effective 0) amortised by usage rows, a reversal is a correction only
of an earlier period, and no cell starts a spreadsheet formula. (focus-validator itself runs on
the demo data's export: test_focus_validator.py.)"""

from __future__ import annotations

import csv
import io
import json
from datetime import timedelta
from decimal import Decimal
from unittest import mock

import pyarrow.parquet as pq
import pytest
from django.db.models import Sum
from django.test import TestCase
from django.utils import timezone

from campaigns.models import Team
from campaigns.tests.factories import as_user, committed_campaign, make_user
from ledger import services
from ledger.domain import team_budget as periods
from ledger.models import LedgerEntry
from ledger.operations import export_writers
from ledger.selectors.ledger_export import export_rows

# FinOps Open Cost and Usage Specification (FOCUS) 1.2, published 2025-05 by the FinOps
# Foundation: its columns (section "Columns"), written out here apart from the code's copy.
FOCUS_1_2_COLUMNS = {
    "AvailabilityZone", "BilledCost", "BillingAccountId", "BillingAccountName",
    "BillingAccountType", "BillingCurrency", "BillingPeriodEnd", "BillingPeriodStart",
    "CapacityReservationId", "CapacityReservationStatus", "ChargeCategory", "ChargeClass",
    "ChargeDescription", "ChargeFrequency", "ChargePeriodEnd", "ChargePeriodStart",
    "CommitmentDiscountCategory", "CommitmentDiscountId", "CommitmentDiscountName",
    "CommitmentDiscountQuantity", "CommitmentDiscountStatus", "CommitmentDiscountType",
    "CommitmentDiscountUnit", "ConsumedQuantity", "ConsumedUnit", "ContractedCost",
    "ContractedUnitPrice", "EffectiveCost", "InvoiceId", "InvoiceIssuerName", "ListCost",
    "ListUnitPrice", "PricingCategory", "PricingCurrency", "PricingCurrencyContractedUnitPrice",
    "PricingCurrencyEffectiveCost", "PricingCurrencyListUnitPrice", "PricingQuantity",
    "PricingUnit", "ProviderName", "PublisherName", "RegionId", "RegionName", "ResourceId",
    "ResourceName", "ResourceType", "ServiceCategory", "ServiceName", "ServiceSubcategory",
    "SkuId", "SkuMeter", "SkuPriceDetails", "SkuPriceId", "SubAccountId", "SubAccountName",
    "SubAccountType", "Tags",
}  # fmt: skip
CHARGE_CATEGORIES = {"Usage", "Purchase", "Tax", "Credit", "Adjustment"}


@pytest.mark.postgres
class LedgerExportTests(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="desk-a")
        cls.other = Team.objects.create(name="desk-b")
        cls.viewer = make_user("vera", team=cls.team, role="viewer")
        cls.stranger = make_user("sam", team=cls.other)
        now = timezone.now()
        cls.this_month = periods.period_bounds("month", now.date())[0]
        last = cls.this_month - timedelta(days=3)
        with mock.patch("django.utils.timezone.now", return_value=last):
            cls.a = committed_campaign(cls.team, title="A")  # 47.14 lot, last month
            cls.fee = services.post_entry(
                campaign=cls.a, kind="included", description="setup fee",
                amount=Decimal("5.00"), currency="USD",
            )  # fmt: skip
        # A title a spreadsheet would run as a formula.
        cls.b = committed_campaign(cls.team, title='=HYPERLINK("http://x")', lots=2)
        storage = services.post_entry(
            campaign=cls.a,
            kind="included",
            description="storage",
            amount=Decimal("12.50"),
            currency="USD",
        )
        services.post_entry(
            campaign=cls.a,
            kind="external",
            description="annotators",
            amount=Decimal("300.00"),
            currency="USD",
        )
        services.reverse_entry(campaign=cls.a, entry_id=storage.pk, description="storage refunded")
        services.reverse_entry(campaign=cls.a, entry_id=cls.fee.pk, description="fee refunded")
        committed_campaign(cls.other, title="C")

    def export(self, fmt: str, period: str, user=None):  # type: ignore[no-untyped-def]
        return as_user(user or self.viewer).get(
            f"/api/v1/teams/{self.team.pk}/ledger/export", {"format": fmt, "period": period}
        )

    def label(self, start) -> str:  # type: ignore[no-untyped-def]
        return periods.period_label("month", start.date())

    def csv_rows(self, period: str) -> list[dict[str, str]]:
        answer = self.export("csv", period)
        self.assertEqual(answer.status_code, 200)
        self.assertTrue(answer.streaming)
        self.assertIn("attachment", answer["Content-Disposition"])
        text = b"".join(answer.streaming_content).decode()
        return list(csv.DictReader(io.StringIO(text)))

    def ledger_total(self, campaign, start, end, kinds) -> Decimal:  # type: ignore[no-untyped-def]
        return LedgerEntry.objects.filter(
            campaign=campaign, created_at__gte=start, created_at__lt=end, kind__in=kinds
        ).aggregate(t=Sum("amount"))["t"] or Decimal("0")

    def test_rows_sum_to_the_ledger_per_campaign_and_period(self) -> None:
        last_month = periods.period_bounds("month", (self.this_month - timedelta(days=1)).date())
        this_month = periods.period_bounds("month", self.this_month.date())
        for start, end in (last_month, this_month):
            rows = self.csv_rows(self.label(start))
            for campaign in (self.a, self.b):
                mine = [r for r in rows if r["SubAccountId"] == f"campaign/{campaign.pk}"]
                for kinds in (("rental", "included"), ("external",)):
                    exported = sum(
                        (Decimal(r["BilledCost"]) for r in mine if r["x_LedgerKind"] in kinds),
                        Decimal("0"),
                    )
                    self.assertEqual(
                        exported,
                        self.ledger_total(campaign, start, end, kinds),
                        (campaign.title, start, kinds),
                    )
            self.assertTrue(all(r["BillingAccountId"] == f"team/{self.team.pk}" for r in rows))
        last = self.csv_rows(self.label(last_month[0]))
        [purchase] = [
            r for r in last if r["ChargeCategory"] == "Purchase" and "lot" in r["ResourceId"]
        ]
        self.assertEqual((purchase["BilledCost"], purchase["EffectiveCost"]), ("47.14", "0.00"))
        self.assertEqual(purchase["ConsumedQuantity"], "")  # consumed only by usage rows
        self.assertEqual((purchase["PricingQuantity"], purchase["PricingUnit"]), ("1", "Lots"))
        # The lot's 72 hours, amortised over the three days it ran: billed 0, effective its price.
        days = [r for r in last if r["CommitmentDiscountStatus"] == "Used"]
        self.assertEqual(len(days), 3)
        self.assertTrue(all(r["BilledCost"] == "0.00" for r in days))
        self.assertTrue(all(r["ChargeCategory"] == "Usage" for r in days))
        self.assertEqual({r["ConsumedQuantity"] for r in days}, {"24.0000"})
        effective = sum(Decimal(r["EffectiveCost"]) for r in days)
        self.assertLess(abs(effective - Decimal("47.14")), Decimal("0.001"))
        for row in days:
            cost = Decimal(row["ContractedUnitPrice"]) * Decimal(row["PricingQuantity"])
            self.assertEqual(cost, Decimal(row["ContractedCost"]))

    def test_columns_are_the_focus_list_and_values_are_valid(self) -> None:
        rows = self.csv_rows(self.label(self.this_month))
        columns = set(rows[0])
        self.assertEqual(FOCUS_1_2_COLUMNS - columns, set())
        self.assertTrue(all(c.startswith("x_") for c in columns - FOCUS_1_2_COLUMNS))
        for row in rows:
            self.assertIn(row["ChargeCategory"], CHARGE_CATEGORIES)
            self.assertTrue(row["ChargePeriodStart"] < row["ChargePeriodEnd"])
            self.assertTrue(row["BillingPeriodStart"] <= row["ChargePeriodStart"])
            self.assertTrue(row["SkuId"] and row["ListUnitPrice"] and row["PricingUnit"])
            self.assertTrue(all(k.startswith("campaigndesk/") for k in json.loads(row["Tags"])))
            if row["ChargeCategory"] != "Usage":
                self.assertEqual(row["ConsumedQuantity"], "")
        # The fee posted last month and refunded now corrects an earlier period; the storage
        # refunded in the month it was posted is a plain negative charge.
        [correction] = [r for r in rows if r["ChargeClass"] == "Correction"]
        self.assertEqual(correction["BilledCost"], "-5.00")
        [refund] = [r for r in rows if r["ChargeDescription"] == "storage refunded"]
        self.assertEqual((refund["BilledCost"], refund["ChargeClass"]), ("-12.50", ""))
        titles = {r["SubAccountName"] for r in rows if r["x_CampaignId"] == str(self.b.pk)}
        self.assertEqual(titles, {'\'=HYPERLINK("http://x")'})  # inert in a spreadsheet
        [external] = [r for r in rows if r["x_LedgerKind"] == "external"]
        self.assertEqual(external["ServiceName"], "External cost")

    def test_parquet_has_the_same_rows_in_row_groups(self) -> None:
        answer = self.export("parquet", self.label(self.this_month))
        self.assertEqual(answer.status_code, 200)
        table = pq.read_table(io.BytesIO(b"".join(answer.streaming_content)))
        self.assertEqual(FOCUS_1_2_COLUMNS - set(table.column_names), set())
        csv_total = sum(
            Decimal(r["BilledCost"]) for r in self.csv_rows(self.label(self.this_month))
        )
        self.assertEqual(sum(table.column("BilledCost").to_pylist()), csv_total)
        sink = io.BytesIO()
        rows = export_rows(self.team.pk, "month", self.this_month.date(), chunk_size=2)
        written = export_writers.write_parquet(rows, sink, row_group=2)
        self.assertEqual(written, len(self.csv_rows(self.label(self.this_month))))
        groups = pq.ParquetFile(io.BytesIO(sink.getvalue())).num_row_groups
        self.assertEqual(groups, (written + 1) // 2)

    def test_refusals_name_the_parameter_and_other_teams_are_404(self) -> None:
        self.assertEqual(
            self.export("xlsx", "2026-01").json(), {"format": ["'xlsx': use csv or parquet"]}
        )
        self.assertIn("period", self.export("csv", "2026-Q7").json())
        self.assertIn("period", self.export("csv", "").json())
        self.assertEqual(self.export("csv", "2026-01", self.stranger).status_code, 404)

    def test_the_admin_exports_the_same_file_from_the_team_page(self) -> None:
        from django.urls import reverse

        self.client.force_login(self.viewer)
        page = self.client.get(reverse("admin:campaigns_team_change", args=[self.team.pk]))
        self.assertContains(page, 'id="team-export-link"')
        url = reverse("admin:campaigns_team_export", args=[self.team.pk])
        self.assertContains(self.client.get(url), 'id="export-form"')
        label = self.label(self.this_month)
        answer = self.client.get(url, {"period": label, "format": "csv"})
        admin_text = b"".join(answer.streaming_content).decode()
        api_text = b"".join(self.export("csv", label).streaming_content).decode()
        self.assertEqual(admin_text, api_text)
        self.assertContains(self.client.get(url, {"period": "June"}), "YYYY-MM or YYYY-Qn")
        self.client.force_login(self.stranger)
        self.assertEqual(self.client.get(url).status_code, 404)

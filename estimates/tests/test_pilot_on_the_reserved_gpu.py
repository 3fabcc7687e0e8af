"""The hardware options know where a pilot ran (issue 18): an item that names no GPU is piloted
on the campaign's reserved machine, so right after a pilot on the RTX 4090 lot the RTX 4090
option is "measured by a pilot", not "no pilot on this GPU"."""

from __future__ import annotations

from django.test import TestCase

from campaigns.models import PlannedItem, Team
from campaigns.tests.factories import celery_eager, committed_campaign, make_user, pilot
from estimates.selectors.hardware_options import campaign_hardware_options


class APilotOnTheReservedGpu(TestCase):
    def test_the_reserved_gpus_option_is_measured(self) -> None:
        team = Team.objects.create(name="nlp")
        make_user("pia", team=team)
        campaign = committed_campaign(team)  # one RTX 4090 3-day lot
        item = PlannedItem.objects.get(campaign=campaign, name="variant A")
        self.assertEqual(item.gpu, "")
        PlannedItem.objects.filter(pk=item.pk).update(tokens=2_000_000_000)
        with celery_eager(), self.captureOnCommitCallbacks(execute=True):
            pilot(item, tokens_per_second=25_000)
        ranked, _excluded = campaign_hardware_options(campaign)
        rtx = next(o for o in ranked if o.gpu == "RTX-4090")
        self.assertIn("Measured by a pilot on the RTX-4090 for variant A", rtx.assumption)
        self.assertNotIn("no pilot on this GPU", rtx.assumption)
        # On another GPU the pilot's hours are projected, not taken as they were measured.
        other = next(o for o in ranked if o.gpu != "RTX-4090" and o.time_source != "assumed")
        self.assertEqual(other.time_source, "projected")

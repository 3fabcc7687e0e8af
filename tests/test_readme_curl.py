"""The README's curl block for a first pilot runs as written (issue 18, item 6): the test reads
the block out of README.md, puts in the live server's address and the key `issue_ingest_key`
printed, and runs it with bash and curl, so the README cannot drift from the API.

The block reads the key's own campaign and item (`GET /ingest-key/`), uses a fresh run id each
time (twice in a row both create a run), and commits nothing: on a draft it stops at the 409
that says to commit first, and the campaign stays a draft."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import LiveServerTestCase

from campaigns.models import Campaign, Run, Team
from campaigns.tests.factories import committed_campaign, make_plannable

README = Path(__file__).resolve().parent.parent / "README.md"
MISSING = None if shutil.which("curl") and shutil.which("bash") else "needs curl and bash"


def curl_block() -> str:
    """The ```sh block right after "The same with curl"."""
    text = README.read_text()
    after = text[text.index("The same with curl") :]
    found = re.search(r"```sh\n(.*?)```", after, re.S)
    assert found, "no sh block after 'The same with curl'"
    return found.group(1)


@pytest.mark.skipif(MISSING is not None, reason=MISSING or "")
class TheReadmeCurlBlock(LiveServerTestCase):
    # A fixed port when asked (a session's own range), else any free one.
    port = int(os.environ.get("LIVE_SERVER_PORT", "0"))

    def run_block(self, key: str) -> subprocess.CompletedProcess[str]:
        block = curl_block()
        self.assertIn("URL=http://127.0.0.1:8000/api/v1\n", block)
        block = block.replace(
            "URL=http://127.0.0.1:8000/api/v1", f"URL={self.live_server_url}/api/v1", 1
        )
        env = {**os.environ, "CAMPAIGN_DESK_KEY": key}
        return subprocess.run(
            ["bash", "-eu", "-o", "pipefail", "-c", block],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )

    def issued_key(self, campaign: Campaign) -> str:
        out = StringIO()
        call_command("issue_ingest_key", str(campaign.pk), stdout=out)
        return out.getvalue().strip()

    def test_it_logs_a_pilot_into_the_keys_own_campaign_with_a_fresh_run_id_each_time(
        self,
    ) -> None:
        team = Team.objects.create(name="nlp")
        committed_campaign(team, title="Someone else's", lots=0)  # not the key's campaign
        ours = committed_campaign(team, title="Rank 16 or rank 8?", lots=0)
        key = self.issued_key(ours)
        for attempt in (1, 2):
            with self.subTest(attempt=attempt):
                done = self.run_block(key)
                self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
                self.assertIn('"stopped":true', done.stdout.replace(" ", ""))
                self.assertIn('"status":"stopped"', done.stdout.replace(" ", ""))
        runs = list(Run.objects.order_by("id"))
        self.assertEqual([r.campaign_id for r in runs], [ours.pk, ours.pk])
        self.assertNotEqual(runs[0].run_id, runs[1].run_id)
        self.assertTrue(all(r.kind == "pilot" and r.variant is not None for r in runs))

    def test_on_a_draft_it_stops_at_the_409_and_commits_nothing(self) -> None:
        draft = make_plannable(Team.objects.create(name="nlp"), title="Still a draft")
        done = self.run_block(self.issued_key(draft))
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("commit the plan before logging runs", done.stdout)
        draft.refresh_from_db()
        self.assertEqual(draft.status, "draft")
        self.assertFalse(Run.objects.exists())

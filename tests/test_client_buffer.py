"""The client never drops a batch (issue 19, High 3): 5xx retried with the same key, unsent points
kept in a bounded buffer, spilled to a file beyond it, and read back by the next run."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from django.test import SimpleTestCase

from campaign_desk_client import ApiError, DeskUnavailable
from tests.test_client import RUN, Answer, Script, accept, loopback, quick_desk


class NeverDropsABatch(SimpleTestCase):
    def test_a_500_is_retried_with_the_same_key(self) -> None:
        script = Script(RUN, Answer(500, {"detail": "Server error."}), accept)
        with loopback(script) as url:
            run = quick_desk(url).run(campaign=1, run_id="r1")
            run.log(1, loss=2.0)
            self.assertEqual(run.flush(), 1)
        posts = [s for s in script.seen if s.path.endswith("/metrics/")]
        self.assertEqual(len(posts), 2)
        self.assertEqual(posts[0].headers["Idempotency-Key"], posts[1].headers["Idempotency-Key"])

    def test_a_5xx_outlasting_the_retries_keeps_the_batch_and_a_4xx_drops_it(self) -> None:
        script = Script(RUN, Answer(500), Answer(500), Answer(400, {"points": ["bad"]}), accept)
        with loopback(script) as url:
            run = quick_desk(url, max_retries=1).run(campaign=1, run_id="r1")
            run.log(1, loss=2.0)
            with self.assertRaises(DeskUnavailable):
                run.flush()
            self.assertEqual(run.pending_points, 1)  # kept: the finding lost these
            with self.assertRaises(ApiError):
                run.flush()
            self.assertEqual(run.pending_points, 0)  # refused for good: not resent for ever

    def test_log_goes_on_through_an_outage_and_says_how_many_are_pending(self) -> None:
        script = Script(RUN, Answer(503, headers={"Retry-After": "0"}))
        with loopback(script) as url:
            run = quick_desk(url, max_retries=0).run(campaign=1, run_id="r1", flush_points=2)
            for step in range(6):
                run.log(step, loss=1.0)  # no exception: the loop is not the client's to stop
            self.assertEqual(run.pending_points, 6)
            script.answers = [accept]
            self.assertEqual(run.flush(), 6)
            self.assertEqual(run.pending_points, 0)

    def test_beyond_its_bound_without_a_spill_dir_the_oldest_are_dropped_and_counted(self) -> None:
        script = Script(RUN, Answer(503))
        with loopback(script) as url:
            run = quick_desk(url, max_retries=0).run(
                campaign=1, run_id="r1", flush_points=2, max_pending_points=4
            )
            with self.assertLogs("campaign_desk_client", "ERROR") as logged:
                for step in range(8):
                    run.log(step, loss=1.0)
            self.assertLessEqual(run.pending_points, 4)
            self.assertEqual(run.pending_points + run.dropped_points, 8)
            self.assertIn("spill_dir", logged.output[0])

    def test_beyond_its_bound_it_spills_to_a_file_which_the_next_run_sends(self) -> None:
        spill = tempfile.mkdtemp()
        script = Script(RUN, Answer(503))
        with loopback(script) as url:
            run = quick_desk(url, max_retries=0).run(
                campaign=1, run_id="r/1", flush_points=2, max_pending_points=4, spill_dir=spill
            )
            for step in range(10):
                run.log(step, loss=float(step))
            self.assertEqual((run.pending_points, run.dropped_points), (10, 0))
            files = list(Path(spill).iterdir())
            self.assertEqual([f.name for f in files], ["r%2F1.jsonl"])
            spilled_keys = [json.loads(line)["key"] for line in files[0].read_text().splitlines()]
            # The job dies here; a new one takes the run up again and sends everything once.
            script.answers = [RUN, accept]
            again = quick_desk(url).run(
                campaign=1, run_id="r/1", flush_points=2, max_pending_points=4, spill_dir=spill
            )
            self.assertEqual(again.pending_points, sum(1 for _ in spilled_keys) * 2)
            self.assertEqual(again.flush(), len(spilled_keys) * 2)
        self.assertEqual(list(Path(spill).iterdir()), [])
        sent = [s for s in script.seen if s.path.endswith("/metrics/") and s.method == "POST"]
        accepted_keys = [s.headers["Idempotency-Key"] for s in sent[-len(spilled_keys) :]]
        self.assertEqual(accepted_keys, spilled_keys)  # the same keys: a replay if it landed

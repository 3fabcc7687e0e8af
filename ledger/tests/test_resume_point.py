"""The resume-instruction rule of ledger/domain/resume_point.py, without a database."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ledger.domain.resume_point import CheckpointFacts, choose_resume_point

REQUIRED = frozenset({"model", "optimizer"})


def ckpt(**over: object) -> CheckpointFacts:
    base: dict[str, object] = {
        "run_id": "r1",
        "run_status": "completed",
        "step": 100,
        "components": ("model", "optimizer"),
        "location": "s3://ckpt/r1/100",
        "verified": True,
    }
    base.update(over)
    return CheckpointFacts(**base)  # type: ignore[arg-type]


def test_a_verified_complete_checkpoint_of_a_finished_run_is_the_resume_point() -> None:
    good = ckpt()
    assert choose_resume_point([good], REQUIRED).checkpoint == good


def test_a_checkpoint_of_a_stopped_run_under_tmp_is_refused_with_both_reasons() -> None:
    choice = choose_resume_point(
        [ckpt(run_id="varA", run_status="stopped", location="/tmp/ckpt/7")], REQUIRED
    )
    assert choice.checkpoint is None
    assert "stopped by a rule" in choice.why_not[0]
    assert "/tmp" in choice.why_not[0]


def test_it_skips_the_newest_invalid_one_for_an_older_valid_one() -> None:
    older = ckpt(step=50)
    choice = choose_resume_point([ckpt(step=90, components=("model",)), older], REQUIRED)
    assert choice.checkpoint == older


def test_without_checkpoints_it_says_none_was_verified() -> None:
    assert "verified" in choose_resume_point([], REQUIRED).why_not[0]


@given(
    st.lists(
        st.builds(
            ckpt,
            run_status=st.sampled_from(["running", "stopped", "completed", "failed"]),
            location=st.sampled_from(["", "/tmp/a/b", "s3://x/y", "/data/tmpfs/c", "/data/c"]),
            components=st.sampled_from([(), ("model",), ("model", "optimizer")]),
            verified=st.booleans(),
        ),
        max_size=8,
    )
)
def test_a_chosen_checkpoint_always_passes_every_condition(cs: list[CheckpointFacts]) -> None:
    choice = choose_resume_point(cs, REQUIRED)
    c = choice.checkpoint
    if c is None:
        assert choice.why_not
    else:
        assert c.verified and c.run_status != "stopped"
        assert c.location in ("s3://x/y", "/data/c")
        assert set(c.components) >= REQUIRED

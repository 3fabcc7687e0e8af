"""A pilot's throughput read from what its loop logged (campaigns/domain/logged_throughput.py):
pure, no database."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from campaigns.domain.logged_throughput import StepSpan, from_metrics

HF_END = {"train_samples_per_second": 12.5, "train_runtime": 80.0, "train_loss": 2.1}


def test_the_hugging_face_trainers_figures_are_the_whole_jobs_over_the_runs_gpus() -> None:
    found = from_metrics({**HF_END, "train_tokens_per_second": 6400.0}, gpus=2)
    assert found is not None
    assert (found.tokens_per_second, found.samples_per_second) == (6400.0, 12.5)
    assert (found.gpus, found.measured_seconds) == (2, 80.0)
    assert found.source == "train_tokens_per_second, train_samples_per_second"


def test_lightnings_per_device_figures_are_scaled_to_the_runs_gpus() -> None:
    logged = {"train/device/samples_per_sec": 100.0, "train/device/items_per_sec": 51_200.0}
    found = from_metrics({**logged, "train/time": 30.0}, gpus=4)
    assert found is not None
    assert (found.samples_per_second, found.tokens_per_second) == (400.0, 204_800.0)
    assert found.measured_seconds == 30.0


def test_a_whole_job_figure_wins_over_a_per_device_one() -> None:
    logged = {"train/samples_per_sec": 390.0, "train/device/samples_per_sec": 100.0}
    found = from_metrics(logged, gpus=4)
    assert found is not None and found.samples_per_second == 390.0


def test_logged_steps_over_their_times_give_tokens_with_the_tokens_per_step() -> None:
    span = StepSpan(first_step=1, last_step=101, seconds=50.0)  # 2 steps/s
    found = from_metrics({"loss": 2.0}, gpus=1, span=span, tokens_per_step=4096)
    assert found is not None
    assert (found.tokens_per_second, found.samples_per_second) == (8192.0, None)
    assert found.measured_seconds == 50.0
    # Without the tokens per step the steps say nothing of the work.
    assert from_metrics({"loss": 2.0}, gpus=1, span=span) is None


def test_a_librarys_tokens_win_over_the_logged_steps() -> None:
    span = StepSpan(1, 101, 50.0)
    found = from_metrics({"train_tokens_per_second": 1000.0}, gpus=1, span=span, tokens_per_step=8)
    assert found is not None and found.tokens_per_second == 1000.0


def test_nothing_logged_or_nothing_usable_is_no_throughput() -> None:
    assert from_metrics({}, gpus=1) is None
    assert from_metrics({"train_samples_per_second": math.nan}, gpus=1) is None
    assert from_metrics({"train_samples_per_second": 0.0}, gpus=1) is None
    assert from_metrics({}, gpus=1, span=StepSpan(5, 5, 10.0), tokens_per_step=10) is None
    assert from_metrics({}, gpus=1, span=StepSpan(1, 5, 0.0), tokens_per_step=10) is None


def test_the_wall_time_is_the_measure_of_last_resort() -> None:
    found = from_metrics({"train/device/samples_per_sec": 3.0}, gpus=1, wall_seconds=12.0)
    assert found is not None and found.measured_seconds == 12.0


rates = st.floats(min_value=1e-3, max_value=1e9, allow_nan=False)


@given(device=rates, gpus=st.integers(1, 1024))
def test_per_device_scaling_is_linear_in_the_gpus(device: float, gpus: int) -> None:
    found = from_metrics({"train/device/samples_per_sec": device}, gpus=gpus)
    assert found is not None and found.gpus == gpus
    assert math.isclose(found.samples_per_second or 0, device * gpus)


@given(
    figures=st.dictionaries(
        st.sampled_from(
            [
                "train_tokens_per_second",
                "train_samples_per_second",
                "train/items_per_sec",
                "train/device/items_per_sec",
                "train/device/samples_per_sec",
                "train/samples_per_sec",
            ]
        ),
        st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.just(1.7e308)),
    ),
    gpus=st.integers(-3, 64),
)
def test_whatever_is_logged_the_answer_is_positive_and_finite_or_none(
    figures: dict[str, float], gpus: int
) -> None:
    found = from_metrics(figures, gpus=gpus)
    if found is None:
        return
    assert found.gpus >= 1
    for rate in (found.tokens_per_second, found.samples_per_second):
        assert rate is None or (rate > 0 and math.isfinite(rate))
    assert found.tokens_per_second or found.samples_per_second

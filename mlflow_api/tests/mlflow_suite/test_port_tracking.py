# Ported from MLflow's tests/tracking/test_tracking.py (https://github.com/mlflow/mlflow, the
# copy stored at commit 00c52d4dabfdcad710d73794c7c6b6be416b4bf5 and the later one the search
# index holds beside it), Copyright 2018 Databricks, Inc. and the MLflow contributors, licensed
# under the Apache License 2.0 (LICENSE beside this file). Changes: the tracking URI fixture is
# this project's (conftest.py), `run_uuid` reads `run_id` (MLflow 3's RunInfo), and only the
# tests that run through a tracking server are ported; README.md lists the others and why.
"""MLflow's fluent-API tracking tests, through whichever server conftest.py starts."""

from __future__ import annotations

import random
import re
from collections import namedtuple
from typing import Any
from unittest import mock

import mlflow
import pytest
from mlflow import MlflowClient, tracking
from mlflow.entities import LifecycleStage, Metric, Param, RunStatus, RunTag
from mlflow.environment_variables import MLFLOW_RUN_ID
from mlflow.exceptions import MlflowException
from mlflow.protos.databricks_pb2 import INVALID_PARAMETER_VALUE, RESOURCE_DOES_NOT_EXIST, ErrorCode
from mlflow.tracking.fluent import start_run
from mlflow.utils.mlflow_tags import (
    MLFLOW_PARENT_RUN_ID,
    MLFLOW_RUN_NAME,
    MLFLOW_SOURCE_NAME,
    MLFLOW_SOURCE_TYPE,
    MLFLOW_USER,
)
from mlflow.utils.time import get_current_time_millis

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("tracking_uri")]

MockExperiment = namedtuple("MockExperiment", ["experiment_id", "lifecycle_stage"])
# The source-tagging tags the fluent client adds to every run (upstream's "approx" set), plus
# the git commit it adds when the test runs from a checkout, as here.
AUTO_TAGS = {
    MLFLOW_USER,
    MLFLOW_SOURCE_NAME,
    MLFLOW_SOURCE_TYPE,
    MLFLOW_RUN_NAME,
    "mlflow.source.git.commit",
}


def _own_tags(tags: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in tags.items() if k not in AUTO_TAGS}


def test_create_experiment() -> None:
    with pytest.raises(MlflowException, match="Invalid experiment name"):
        mlflow.create_experiment(None)
    with pytest.raises(MlflowException, match="Invalid experiment name"):
        mlflow.create_experiment("")
    assert mlflow.create_experiment(f"Some random experiment name {random.randint(1, 10**6)}")


def test_create_experiment_with_duplicate_name() -> None:
    name = "popular_name"
    exp_id = mlflow.create_experiment(name)
    with pytest.raises(MlflowException, match=re.escape(f"Experiment(name={name}) already exists")):
        mlflow.create_experiment(name)
    tracking.MlflowClient().delete_experiment(exp_id)
    with pytest.raises(MlflowException, match=re.escape(f"Experiment(name={name}) already exists")):
        mlflow.create_experiment(name)


def test_create_experiments_with_bad_names() -> None:
    with pytest.raises(MlflowException, match="Invalid experiment name: 'None'"):
        mlflow.create_experiment(None)
    with pytest.raises(MlflowException, match="Invalid experiment name: ''"):
        mlflow.create_experiment("")


@pytest.mark.parametrize("name", [123, 0, -1.2, [], ["A"], {1: 2}])
def test_create_experiments_with_bad_name_types(name: Any) -> None:
    with pytest.raises(
        MlflowException, match=re.escape(f"Invalid experiment name: {name}. Expects a string.")
    ):
        mlflow.create_experiment(name)


def test_set_experiment_by_name() -> None:
    exp_id = mlflow.create_experiment("random_exp")
    assert mlflow.set_experiment("random_exp").experiment_id == exp_id
    with start_run() as run:
        assert run.info.experiment_id == exp_id
    exp2 = mlflow.set_experiment("another_experiment")
    with start_run() as another_run:
        assert another_run.info.experiment_id == exp2.experiment_id


def test_set_experiment_by_id() -> None:
    exp_id = mlflow.create_experiment("random_exp")
    assert mlflow.set_experiment(experiment_id=exp_id).experiment_id == exp_id
    with start_run() as run:
        assert run.info.experiment_id == exp_id
    with pytest.raises(MlflowException, match="No Experiment with id=-1337 exists") as exc:
        mlflow.set_experiment(experiment_id="-1337")
    assert exc.value.error_code == ErrorCode.Name(RESOURCE_DOES_NOT_EXIST)
    with start_run() as run:
        assert run.info.experiment_id == exp_id


def test_set_experiment_parameter_validation() -> None:
    for args in [(), (None,), (None, None), ("name", "id")]:
        with pytest.raises(MlflowException, match="Must specify exactly one") as exc:
            mlflow.set_experiment(*args)
        assert exc.value.error_code == ErrorCode.Name(INVALID_PARAMETER_VALUE)


def test_set_experiment_with_deleted_experiment() -> None:
    mlflow.set_experiment("dead_exp")
    with start_run() as run:
        exp_id = run.info.experiment_id
    tracking.MlflowClient().delete_experiment(exp_id)
    with pytest.raises(MlflowException, match="Cannot set a deleted experiment") as exc:
        mlflow.set_experiment("dead_exp")
    assert exc.value.error_code == ErrorCode.Name(INVALID_PARAMETER_VALUE)
    with pytest.raises(MlflowException, match="Cannot set a deleted experiment") as exc:
        mlflow.set_experiment(experiment_id=exp_id)
    assert exc.value.error_code == ErrorCode.Name(INVALID_PARAMETER_VALUE)


def test_set_experiment_with_zero_id() -> None:
    found = MockExperiment(experiment_id=0, lifecycle_stage=LifecycleStage.ACTIVE)
    with (
        mock.patch.object(
            MlflowClient, "get_experiment_by_name", mock.Mock(return_value=found)
        ) as by_name,
        mock.patch.object(MlflowClient, "create_experiment") as create,
    ):
        mlflow.set_experiment("my_exp")
        by_name.assert_called_once()
        create.assert_not_called()


def test_start_run_context_manager() -> None:
    with start_run() as first_run:
        first_uuid = first_run.info.run_id
        persisted_run = tracking.MlflowClient().get_run(first_uuid)
        assert persisted_run is not None
        assert persisted_run.info == first_run.info
    assert tracking.MlflowClient().get_run(first_uuid).info.status == RunStatus.to_string(
        RunStatus.FINISHED
    )
    with pytest.raises(Exception, match="Failing run!"), start_run() as second_run:
        raise Exception("Failing run!")
    second_run_id = second_run.info.run_id
    assert second_run_id != first_uuid
    finished = tracking.MlflowClient().get_run(second_run_id)
    assert finished.info.status == RunStatus.to_string(RunStatus.FAILED)


def test_start_and_end_run() -> None:
    with start_run() as active_run:
        mlflow.log_metric("name_1", 25)
    finished_run = tracking.MlflowClient().get_run(active_run.info.run_id)
    assert finished_run.data.metrics == {"name_1": 25}


def test_metric_timestamp() -> None:
    with mlflow.start_run() as active_run:
        mlflow.log_metric("name_1", 25)
        mlflow.log_metric("name_1", 30)
        run_id = active_run.info.run_id
    client = MlflowClient()
    history = client.get_metric_history(run_id, "name_1")
    finished_run = client.get_run(run_id)
    assert len(history) == 2
    assert all(
        finished_run.info.start_time <= m.timestamp <= finished_run.info.end_time for m in history
    )


def test_log_batch() -> None:
    expected_metrics = {"metric-key0": 1.0, "metric-key1": 4.0}
    expected_params = {"param-key0": "param-val0", "param-key1": "param-val1"}
    exact_expected_tags = {"tag-key0": "tag-val0", "tag-key1": "tag-val1"}
    t = get_current_time_millis()
    metrics = [
        Metric(key=k, value=v, timestamp=t, step=i)
        for i, (k, v) in enumerate(sorted(expected_metrics.items()))
    ]
    params = [Param(key=k, value=v) for k, v in expected_params.items()]
    tags = [RunTag(key=k, value=v) for k, v in exact_expected_tags.items()]
    with start_run() as active_run:
        run_id = active_run.info.run_id
        MlflowClient().log_batch(run_id=run_id, metrics=metrics, params=params, tags=tags)
    client = tracking.MlflowClient()
    finished_run = client.get_run(run_id)
    assert finished_run.data.metrics == expected_metrics
    assert {
        (m.value, m.timestamp, m.step) for m in client.get_metric_history(run_id, "metric-key0")
    } == {(1.0, t, 0)}
    assert {
        (m.value, m.timestamp, m.step) for m in client.get_metric_history(run_id, "metric-key1")
    } == {(4.0, t, 1)}
    assert _own_tags(finished_run.data.tags) == exact_expected_tags
    assert finished_run.data.params == expected_params
    new_tags = {"1": "2", "3": "4", "5": "6"}
    client.log_batch(run_id=run_id, tags=[RunTag(key=k, value=v) for k, v in new_tags.items()])
    finished_run_2 = client.get_run(run_id)
    assert len(finished_run_2.data.tags) == len(finished_run.data.tags) + 3
    assert {k: v for k, v in finished_run_2.data.tags.items() if k in new_tags} == new_tags


def test_log_metric() -> None:
    with start_run() as active_run, mock.patch("time.time") as time_mock:
        time_mock.side_effect = [123 for _ in range(100)]
        run_id = active_run.info.run_id
        mlflow.log_metric("name_1", 25)
        mlflow.log_metric("name_2", -3)
        mlflow.log_metric("name_1", 30, 5)
        mlflow.log_metric("name_1", 40, -2)
        mlflow.log_metric("nested/nested/name", 40)
    finished_run = tracking.MlflowClient().get_run(run_id)
    assert finished_run.data.metrics == {"name_1": 30, "name_2": -3, "nested/nested/name": 40}
    client = tracking.MlflowClient()
    assert {
        (m.value, m.timestamp, m.step) for m in client.get_metric_history(run_id, "name_1")
    } == {
        (25, 123 * 1000, 0),
        (30, 123 * 1000, 5),
        (40, 123 * 1000, -2),
    }
    assert {
        (m.value, m.timestamp, m.step) for m in client.get_metric_history(run_id, "name_2")
    } == {(-3, 123 * 1000, 0)}


def test_log_metrics_uses_millisecond_timestamp_resolution_fluent() -> None:
    with start_run() as active_run, mock.patch("time.time") as time_mock:
        time_mock.side_effect = lambda: 123
        mlflow.log_metrics({"name_1": 25, "name_2": -3})
        mlflow.log_metrics({"name_1": 30})
        mlflow.log_metrics({"name_1": 40})
        run_id = active_run.info.run_id
    client = tracking.MlflowClient()
    assert {(m.value, m.timestamp) for m in client.get_metric_history(run_id, "name_1")} == {
        (25, 123000),
        (30, 123000),
        (40, 123000),
    }
    assert {(m.value, m.timestamp) for m in client.get_metric_history(run_id, "name_2")} == {
        (-3, 123000)
    }


def test_log_metrics_uses_millisecond_timestamp_resolution_client() -> None:
    with start_run() as active_run, mock.patch("time.time") as time_mock:
        time_mock.side_effect = lambda: 123
        client = tracking.MlflowClient()
        run_id = active_run.info.run_id
        client.log_metric(run_id=run_id, key="name_1", value=25)
        client.log_metric(run_id=run_id, key="name_2", value=-3)
        client.log_metric(run_id=run_id, key="name_1", value=30)
        client.log_metric(run_id=run_id, key="name_1", value=40)
    assert {(m.value, m.timestamp) for m in client.get_metric_history(run_id, "name_1")} == {
        (25, 123000),
        (30, 123000),
        (40, 123000),
    }
    assert {(m.value, m.timestamp) for m in client.get_metric_history(run_id, "name_2")} == {
        (-3, 123000)
    }


@pytest.mark.parametrize("step_kwarg", [None, -10, 5])
def test_log_metrics_uses_common_timestamp_and_step_per_invocation(step_kwarg: int | None) -> None:
    expected_metrics = {"name_1": 30, "name_2": -3, "nested/nested/name": 40}
    with start_run() as active_run:
        run_id = active_run.info.run_id
        mlflow.log_metrics(expected_metrics, step=step_kwarg)
    finished_run = tracking.MlflowClient().get_run(run_id)
    assert finished_run.data.metrics == expected_metrics
    common_timestamp = finished_run.data._metric_objs[0].timestamp
    for metric in finished_run.data._metric_objs:
        assert (metric.timestamp, metric.step) == (common_timestamp, step_kwarg or 0)


def test_set_tags() -> None:
    exact_expected_tags = {"name_1": "c", "name_2": "b", "nested/nested/name": 5}
    with start_run() as active_run:
        run_id = active_run.info.run_id
        mlflow.set_tags(exact_expected_tags)
    finished_run = tracking.MlflowClient().get_run(run_id)
    assert _own_tags(finished_run.data.tags) == {k: str(v) for k, v in exact_expected_tags.items()}


def test_log_metric_validation() -> None:
    with start_run() as active_run:
        run_id = active_run.info.run_id
        with pytest.raises(
            MlflowException, match="Invalid value \"apple\" for parameter 'value' supplied"
        ) as e:
            mlflow.log_metric("name_1", "apple")
    assert e.value.error_code == ErrorCode.Name(INVALID_PARAMETER_VALUE)
    assert len(tracking.MlflowClient().get_run(run_id).data.metrics) == 0


def test_log_param() -> None:
    with start_run() as active_run:
        run_id = active_run.info.run_id
        assert mlflow.log_param("name_1", "a") == "a"
        assert mlflow.log_param("name_2", "b") == "b"
        assert mlflow.log_param("nested/nested/name", 5) == 5
    params = tracking.MlflowClient().get_run(run_id).data.params
    assert params == {"name_1": "a", "name_2": "b", "nested/nested/name": "5"}


def test_log_params() -> None:
    with start_run() as active_run:
        run_id = active_run.info.run_id
        mlflow.log_params({"name_1": "c", "name_2": "b", "nested/nested/name": 5})
    params = tracking.MlflowClient().get_run(run_id).data.params
    assert params == {"name_1": "c", "name_2": "b", "nested/nested/name": "5"}


def test_log_params_duplicate_keys_raises() -> None:
    params = {"a": "1", "b": "2"}
    with start_run() as active_run:
        run_id = active_run.info.run_id
        mlflow.log_params(params)
        with pytest.raises(
            MlflowException, match=r"Changing param values is not allowed. Param with key="
        ) as e:
            mlflow.log_param("a", "3")
        assert e.value.error_code == ErrorCode.Name(INVALID_PARAMETER_VALUE)
    assert tracking.MlflowClient().get_run(run_id).data.params == params


def test_param_metric_with_colon() -> None:
    with start_run() as active_run:
        run_id = active_run.info.run_id
        mlflow.log_param("a:b", 3)
        mlflow.log_metric("c:d", 4)
    finished_run = tracking.MlflowClient().get_run(run_id)
    assert finished_run.data.params == {"a:b": "3"}
    assert finished_run.data.metrics == {"c:d": 4}


def test_with_startrun() -> None:
    t0 = get_current_time_millis()
    with mlflow.start_run() as active_run:
        assert mlflow.active_run() == active_run
        run_id = active_run.info.run_id
    t1 = get_current_time_millis()
    run_info = mlflow.tracking._get_store().get_run(run_id).info
    assert run_info.status == "FINISHED"
    assert t0 <= run_info.end_time <= t1
    assert mlflow.active_run() is None


def test_parent_create_run(monkeypatch: pytest.MonkeyPatch) -> None:
    with mlflow.start_run() as parent_run:
        parent_run_id = parent_run.info.run_id
    monkeypatch.setenv(MLFLOW_RUN_ID.name, parent_run_id)
    with mlflow.start_run() as parent_run:
        assert parent_run.info.run_id == parent_run_id
        with pytest.raises(Exception, match="To start a nested run"):
            mlflow.start_run()
        with mlflow.start_run(nested=True) as child_run:
            assert child_run.info.run_id != parent_run_id
            with mlflow.start_run(nested=True) as grand_child_run:
                pass

    def parent_of(child_id: str) -> str:
        return tracking.MlflowClient().get_run(child_id).data.tags[MLFLOW_PARENT_RUN_ID]

    assert parent_of(child_run.info.run_id) == parent_run.info.run_id
    assert parent_of(grand_child_run.info.run_id) == child_run.info.run_id
    assert mlflow.active_run() is None


def test_start_deleted_run() -> None:
    with mlflow.start_run() as active_run:
        run_id = active_run.info.run_id
    tracking.MlflowClient().delete_run(run_id)
    with (
        pytest.raises(MlflowException, match=r"because it is in the deleted state\."),
        mlflow.start_run(run_id=run_id),
    ):
        pass
    assert mlflow.active_run() is None


def test_get_artifact_uri_with_artifact_path_unspecified_returns_artifact_root_dir() -> None:
    with mlflow.start_run() as active_run:
        assert mlflow.get_artifact_uri(artifact_path=None) == active_run.info.artifact_uri


def test_get_artifact_uri_uses_currently_active_run_id() -> None:
    with mlflow.start_run() as active_run:
        assert mlflow.get_artifact_uri(
            artifact_path="artifact"
        ) == tracking.artifact_utils.get_artifact_uri(
            run_id=active_run.info.run_id, artifact_path="artifact"
        )

# Ported from MLflow's tests/tracking/test_tracking.py (https://github.com/mlflow/mlflow, the
# copy stored at commit 00c52d4dabfdcad710d73794c7c6b6be416b4bf5 and the later one the search
# index holds beside it), Copyright 2018 Databricks, Inc. and the MLflow contributors, licensed
# under the Apache License 2.0 (LICENSE beside this file). Changes: the tracking URI fixture is
# this project's (conftest.py), `run_uuid` reads `run_id` (MLflow 3's RunInfo), and only the
# tests that run through a tracking server are ported; README.md lists the others and why.
"""MLflow's fluent-API tests of batches, search and tables, through whichever server
conftest.py starts."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import mlflow
import pandas as pd
import pytest
from mlflow import MlflowClient, tracking
from mlflow.entities import Metric, Param, RunTag, ViewType
from mlflow.environment_variables import MLFLOW_ASYNC_LOGGING_THREADPOOL_SIZE
from mlflow.exceptions import MlflowException
from mlflow.protos.databricks_pb2 import INVALID_PARAMETER_VALUE, ErrorCode
from mlflow.tracking.fluent import start_run
from mlflow.utils.time import get_current_time_millis
from mlflow.utils.validation import MAX_METRICS_PER_BATCH, MAX_PARAMS_TAGS_PER_BATCH

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("tracking_uri")]


def test_search_runs() -> None:
    mlflow.set_experiment("exp-for-search")
    logged = {}
    with mlflow.start_run() as active_run:
        logged["first"] = active_run.info.run_id
        mlflow.log_metric("m1", 0.001)
        mlflow.log_metric("m2", 0.002)
        mlflow.log_metric("m1", 0.002)
        mlflow.log_param("p1", "a")
        mlflow.set_tag("t1", "first-tag-val")
    with mlflow.start_run() as active_run:
        logged["second"] = active_run.info.run_id
        mlflow.log_metric("m1", 0.008)
        mlflow.log_param("p2", "aa")
        mlflow.set_tag("t2", "second-tag-val")
    client = MlflowClient()
    experiment_id = client.get_experiment_by_name("exp-for-search").experiment_id

    def found(filter_string: str, view: int = ViewType.ACTIVE_ONLY) -> set[str]:
        return {r.info.run_id for r in client.search_runs([experiment_id], filter_string, view)}

    assert len(client.search_runs([experiment_id], run_view_type=ViewType.ACTIVE_ONLY)) == 2
    assert found("metrics.m1 > 0.0001") == {logged["first"], logged["second"]}
    assert found("metrics.m1 > 0.002") == {logged["second"]}
    assert found("metrics.m1 > 0.1") == set()
    assert found("metrics.m2 > 0") == {logged["first"]}
    assert found("params.p1 = 'a'", ViewType.ALL) == {logged["first"]}
    assert found("params.p2 != 'a'", ViewType.ALL) == {logged["second"]}
    assert found("params.p2 = 'aa'", ViewType.ALL) == {logged["second"]}
    assert found("tags.t1 = 'first-tag-val'", ViewType.ALL) == {logged["first"]}
    assert found("tags.t2 != 'qwerty'", ViewType.ALL) == {logged["second"]}
    assert found("tags.t2 = 'second-tag-val'", ViewType.ALL) == {logged["second"]}
    client.delete_run(logged["first"])
    assert found("params.p1 = 'a'", ViewType.ALL) == {logged["first"]}
    assert found("params.p1 = 'a'", ViewType.DELETED_ONLY) == {logged["first"]}
    assert found("params.p1 = 'a'", ViewType.ACTIVE_ONLY) == set()


def test_search_runs_multiple_experiments() -> None:
    experiment_ids = [mlflow.create_experiment(f"exp__{n}") for n in range(1, 4)]
    for eid in experiment_ids:
        with mlflow.start_run(experiment_id=eid):
            mlflow.log_metric("m0", 1)
            mlflow.log_metric(f"m_{eid}", 2)
    client = MlflowClient()
    assert len(client.search_runs(experiment_ids, "metrics.m0 > 0", ViewType.ALL)) == 3
    # Upstream's keys are m_1, m_2, m_3: MLflow's ids on a fresh store. The ids a server
    # gives are its own, so the keys are taken from them (the same three clauses).
    for eid, clause in zip(experiment_ids, ["> 0", "= 2", "< 4"], strict=True):
        assert (
            len(client.search_runs(experiment_ids, f"metrics.m_{eid} {clause}", ViewType.ALL)) == 1
        )


TABLE = {
    "inputs": ["What is MLflow?", "What is Databricks?"],
    "outputs": ["MLflow is ...", "Databricks is ..."],
    "toxicity": [0.0, 0.0],
}


def _read_table(path: str) -> pd.DataFrame:
    if path.endswith(".json"):
        return pd.read_json(path, orient="split")
    return pd.read_parquet(path)


def _logged_tables(run_id: str) -> list[dict[str, str]]:
    return json.loads(mlflow.get_run(run_id).data.tags.get("mlflow.loggedArtifacts", "[]"))


def _table_shape(run_id: str, artifact_file: str) -> tuple[int, int]:
    return _read_table(
        mlflow.artifacts.download_artifacts(run_id=run_id, artifact_path=artifact_file)
    ).shape


@pytest.mark.parametrize("file_type", ["json", "parquet"])
def test_log_table(file_type: str) -> None:
    artifact_file = f"qabot_eval_results.{file_type}"
    with (
        pytest.raises(
            MlflowException, match=r"data must be a pandas\.DataFrame or a dictionary"
        ) as e,
        mlflow.start_run(),
    ):
        mlflow.log_table(data="incorrect-data-format", artifact_file=artifact_file)
    assert e.value.error_code == ErrorCode.Name(INVALID_PARAMETER_VALUE)
    with mlflow.start_run() as run:
        mlflow.log_table(data=TABLE, artifact_file=artifact_file)
        run_id = run.info.run_id
    assert _table_shape(run_id, artifact_file) == (2, 3)
    assert _logged_tables(run_id) == [{"path": artifact_file, "type": "table"}]
    with mlflow.start_run(run_id=run_id):  # a finished run, reopened
        mlflow.log_table(data=pd.DataFrame.from_dict(TABLE), artifact_file=artifact_file)
    assert _table_shape(run_id, artifact_file) == (4, 3)
    assert _logged_tables(run_id) == [{"path": artifact_file, "type": "table"}]
    new_file = f"qabot_eval_results_new.{file_type}"
    with mlflow.start_run(run_id=run_id):
        mlflow.log_table(data=pd.DataFrame.from_dict(TABLE), artifact_file=new_file)
    assert _table_shape(run_id, new_file) == (2, 3)
    assert {"path": new_file, "type": "table"} in _logged_tables(run_id)
    assert len(_logged_tables(run_id)) == 2


@pytest.mark.parametrize("file_type", ["json", "parquet"])
def test_log_table_with_subdirectory(file_type: str) -> None:
    artifact_file = f"dir/foo.{file_type}"
    with mlflow.start_run() as run:
        mlflow.log_table(data=TABLE, artifact_file=artifact_file)
        run_id = run.info.run_id
    assert _table_shape(run_id, artifact_file) == (2, 3)
    assert _logged_tables(run_id) == [{"path": artifact_file, "type": "table"}]
    with mlflow.start_run(run_id=run_id):
        mlflow.log_table(data=pd.DataFrame.from_dict(TABLE), artifact_file=artifact_file)
    assert _table_shape(run_id, artifact_file) == (4, 3)
    assert _logged_tables(run_id) == [{"path": artifact_file, "type": "table"}]


@pytest.mark.parametrize("file_type", ["json", "parquet"])
def test_load_table(file_type: str) -> None:
    artifact_file = f"qabot_eval_results.{file_type}"
    artifact_file_2 = f"qabot_eval_results_2.{file_type}"
    with mlflow.start_run():
        mlflow.log_table(data=TABLE, artifact_file=artifact_file)
        mlflow.log_table(data=TABLE, artifact_file=artifact_file_2)
    with mlflow.start_run() as run:
        mlflow.log_table(data=TABLE, artifact_file=artifact_file)
        run_id_2 = run.info.run_id
    with mlflow.start_run() as run:
        mlflow.log_table(data=TABLE, artifact_file=artifact_file)
        run_id_3 = run.info.run_id
    extra = ["run_id", "tags.mlflow.loggedArtifacts"]
    out = mlflow.load_table(artifact_file=artifact_file, extra_columns=extra)
    assert out.shape == (6, 5) and out["run_id"].nunique() == 3
    assert out["tags.mlflow.loggedArtifacts"].nunique() == 2
    out = mlflow.load_table(artifact_file=artifact_file, run_ids=[run_id_2], extra_columns=extra)
    assert out.shape == (2, 5) and out["run_id"].nunique() == 1
    out = mlflow.load_table(
        artifact_file=artifact_file, run_ids=[run_id_2, run_id_3], extra_columns=extra
    )
    assert out.shape == (4, 5) and out["run_id"].nunique() == 2
    assert out["tags.mlflow.loggedArtifacts"].nunique() == 1
    pd.testing.assert_frame_equal(
        mlflow.load_table(artifact_file=artifact_file_2), pd.DataFrame(TABLE), check_dtype=False
    )
    assert mlflow.load_table(artifact_file=artifact_file).shape == (6, 3)
    with pytest.raises(
        MlflowException, match="No runs found with the corresponding table artifact"
    ):
        mlflow.load_table(artifact_file=f"error_case.{file_type}")
    with pytest.raises(KeyError, match="error_column"):
        mlflow.load_table(artifact_file=artifact_file, extra_columns=["error_column"])


@pytest.mark.parametrize("file_type", ["json", "parquet"])
def test_log_table_with_datetime_columns(file_type: str) -> None:
    start_time = str(datetime.now(UTC))
    table = {"inputs": ["a", "b"], "outputs": ["c", "d"], "start_time": [start_time, start_time]}
    artifact_file = f"test_time.{file_type}"

    def read(run_id: str) -> pd.DataFrame:
        path = mlflow.artifacts.download_artifacts(run_id=run_id, artifact_path=artifact_file)
        if file_type == "parquet":
            return pd.read_parquet(path)
        return pd.read_json(path, orient="split", convert_dates=False)

    with mlflow.start_run() as run:
        mlflow.log_table(data=table, artifact_file=artifact_file)
        run_id = run.info.run_id
    assert read(run_id)["start_time"][0] == start_time
    mlflow.log_table(data=table, artifact_file=artifact_file, run_id=run_id)  # a finished run
    assert read(run_id)["start_time"][2] == start_time


def test_set_async_logging_threadpool_size() -> None:
    MLFLOW_ASYNC_LOGGING_THREADPOOL_SIZE.set(6)
    try:
        with mlflow.start_run():
            mlflow.log_param("key", "val", synchronous=False)
        store = mlflow.tracking._get_store()
        assert store._async_logging_queue._batch_logging_worker_threadpool._max_workers == 6
        mlflow.flush_async_logging()
    finally:
        MLFLOW_ASYNC_LOGGING_THREADPOOL_SIZE.unset()


def test_log_batch_with_many_elements() -> None:
    num_metrics = MAX_METRICS_PER_BATCH * 2
    num_params = num_tags = MAX_PARAMS_TAGS_PER_BATCH * 2
    expected_metrics = {f"metric-key{i}": float(i) for i in range(num_metrics)}
    expected_params = {f"param-key{i}": f"param-val{i}" for i in range(num_params)}
    exact_expected_tags = {f"tag-key{i}": f"tag-val{i}" for i in range(num_tags)}
    t = get_current_time_millis()
    ordered = sorted(expected_metrics.items(), key=lambda kv: kv[1])
    metrics = [Metric(key=k, value=v, timestamp=t, step=i) for i, (k, v) in enumerate(ordered)]
    params = [Param(key=k, value=v) for k, v in expected_params.items()]
    tags = [RunTag(key=k, value=v) for k, v in exact_expected_tags.items()]
    with start_run() as active_run:
        run_id = active_run.info.run_id
        MlflowClient().log_batch(run_id=run_id, metrics=metrics, params=params, tags=tags)
    client = tracking.MlflowClient()
    finished_run = client.get_run(run_id)
    assert expected_metrics == finished_run.data.metrics
    for i in range(num_metrics):
        history = client.get_metric_history(run_id, f"metric-key{i}")
        assert {(m.value, m.timestamp, m.step) for m in history} == {(float(i), t, i)}
    for key, value in exact_expected_tags.items():
        assert finished_run.data.tags[key] == value
    assert finished_run.data.params == expected_params


def test_log_batch_duplicate_entries_raises() -> None:
    with start_run() as active_run:
        run_id = active_run.info.run_id
        with pytest.raises(
            MlflowException, match=r"Duplicate parameter keys have been submitted."
        ) as e:
            tracking.MlflowClient().log_batch(
                run_id=run_id, params=[Param("a", "1"), Param("a", "2")]
            )
        assert e.value.error_code == ErrorCode.Name(INVALID_PARAMETER_VALUE)


def test_log_batch_validates_entity_names_and_values() -> None:
    client = tracking.MlflowClient()
    cases: list[tuple[dict[str, Any], str]] = [
        (
            {"metrics": [Metric(key="../bad/metric/name", value=0.3, timestamp=3, step=0)]},
            r"Invalid value \"../bad/metric/name\" for parameter \'metrics\[0\].name\'",
        ),
        (
            {"metrics": [Metric(key="ok-name", value="non-numerical-value", timestamp=3, step=0)]},
            r"Invalid value \"non-numerical-value\" for parameter \'metrics\[0\].value\' supplied",
        ),
        (
            {
                "metrics": [
                    Metric(key="ok-name", value=0.3, timestamp="non-numerical-timestamp", step=0)
                ]
            },
            r"Invalid value \"non-numerical-timestamp\" for "
            r"parameter \'metrics\[0\].timestamp\' supplied",
        ),
        (
            {"params": [Param(key="../bad/param/name", value="my-val")]},
            r"Invalid value \"../bad/param/name\" for parameter \'params\[0\].key\' supplied",
        ),
        (
            {"tags": [Param(key="../bad/tag/name", value="my-val")]},
            r"Invalid value \"../bad/tag/name\" for parameter \'tags\[0\].key\' supplied",
        ),
        (
            {"metrics": [Metric(key=None, value=42.0, timestamp=4, step=1)]},
            "Metric name cannot be None. A key name must be provided.",
        ),
    ]
    with start_run() as active_run:
        for kwargs, message in cases:
            with pytest.raises(MlflowException, match=message) as e:
                client.log_batch(active_run.info.run_id, **kwargs)
            assert e.value.error_code == ErrorCode.Name(INVALID_PARAMETER_VALUE)

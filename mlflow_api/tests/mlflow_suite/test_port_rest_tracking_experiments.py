# Ported from MLflow's tests/tracking/test_rest_tracking.py (https://github.com/mlflow/mlflow,
# the copy stored at commit 001cc178a1442b488da41853c497adc5285a284d), Copyright 2018
# Databricks, Inc. and the MLflow contributors, licensed under the Apache License 2.0 (LICENSE
# beside this file). Changes: the server fixture and the raw POST helper are this project's
# (conftest.py: a live Campaign Desk with an ingest key per test, or MLflow's own server); only
# the tests within a tracking server's job are ported, README.md lists the others and why.
"""MLflow's REST tracking tests of experiments, against whichever server conftest.py starts."""

from __future__ import annotations

from typing import Any

import click.testing
import mlflow
import mlflow.experiments
import pytest
from mlflow import MlflowClient
from mlflow.entities import (
    ViewType,
)

from mlflow_api.tests.mlflow_suite.conftest import bad_request

# The live server and the test share the database: each test's data is committed.
pytestmark = pytest.mark.django_db(transaction=True)


def _cli(args: list[str], tracking_uri: str) -> None:
    env = {"LC_ALL": "en_US.UTF-8", "LANG": "en_US.UTF-8", "MLFLOW_TRACKING_URI": tracking_uri}
    result = click.testing.CliRunner().invoke(mlflow.experiments.commands, args, env=env)
    assert result.exit_code == 0, result.output


def test_create_experiment_validation(mlflow_client: MlflowClient) -> None:
    check = bad_request(mlflow_client.tracking_uri, "/api/2.0/mlflow/experiments/create")
    check({"name": 123}, "Invalid value 123 for parameter 'name'")
    check({}, "Missing value for required parameter 'name'")
    check(
        {
            "name": "experiment name",
            "artifact_location": 9.0,
            "tags": [{"key": "key", "value": "value"}],
        },
        "Invalid value 9.0 for parameter 'artifact_location'",
    )
    check(
        {"name": "experiment name", "artifact_location": "my_location", "tags": "5"},
        "Invalid value \\\"5\\\" for parameter 'tags'",
    )


def test_delete_restore_experiment(mlflow_client: MlflowClient) -> None:
    experiment_id = mlflow_client.create_experiment("Deleterious")
    assert mlflow_client.get_experiment(experiment_id).lifecycle_stage == "active"
    mlflow_client.delete_experiment(experiment_id)
    assert mlflow_client.get_experiment(experiment_id).lifecycle_stage == "deleted"
    mlflow_client.restore_experiment(experiment_id)
    assert mlflow_client.get_experiment(experiment_id).lifecycle_stage == "active"


def test_delete_restore_experiment_cli(mlflow_client: MlflowClient) -> None:
    name = "DeleteriousCLI"
    _cli(["create", "--experiment-name", name], mlflow_client.tracking_uri)
    experiment_id = mlflow_client.get_experiment_by_name(name).experiment_id
    assert mlflow_client.get_experiment(experiment_id).lifecycle_stage == "active"
    _cli(["delete", "-x", str(experiment_id)], mlflow_client.tracking_uri)
    assert mlflow_client.get_experiment(experiment_id).lifecycle_stage == "deleted"
    _cli(["restore", "-x", str(experiment_id)], mlflow_client.tracking_uri)
    assert mlflow_client.get_experiment(experiment_id).lifecycle_stage == "active"


def test_rename_experiment(mlflow_client: MlflowClient) -> None:
    experiment_id = mlflow_client.create_experiment("BadName")
    assert mlflow_client.get_experiment(experiment_id).name == "BadName"
    mlflow_client.rename_experiment(experiment_id, "GoodName")
    assert mlflow_client.get_experiment(experiment_id).name == "GoodName"


def test_rename_experiment_cli(mlflow_client: MlflowClient) -> None:
    _cli(["create", "-n", "CLIBadName"], mlflow_client.tracking_uri)
    experiment_id = mlflow_client.get_experiment_by_name("CLIBadName").experiment_id
    assert mlflow_client.get_experiment(experiment_id).name == "CLIBadName"
    _cli(
        ["rename", "--experiment-id", str(experiment_id), "--new-name", "CLIGoodName"],
        mlflow_client.tracking_uri,
    )
    assert mlflow_client.get_experiment(experiment_id).name == "CLIGoodName"


def test_set_experiment_tag(mlflow_client: MlflowClient) -> None:
    experiment_id = mlflow_client.create_experiment("SetExperimentTagTest")
    mlflow_client.set_experiment_tag(experiment_id, "dataset", "imagenet1K")
    assert mlflow_client.get_experiment(experiment_id).tags["dataset"] == "imagenet1K"
    mlflow_client.set_experiment_tag(experiment_id, "dataset", "birdbike")
    assert mlflow_client.get_experiment(experiment_id).tags["dataset"] == "birdbike"
    experiment_id_2 = mlflow_client.create_experiment("SetExperimentTagTest2")
    assert len(mlflow_client.get_experiment(experiment_id_2).tags) == 0
    mlflow_client.set_experiment_tag(experiment_id_2, "dataset", "birds200")
    assert mlflow_client.get_experiment(experiment_id).tags["dataset"] == "birdbike"
    assert mlflow_client.get_experiment(experiment_id_2).tags["dataset"] == "birds200"
    mlflow_client.set_experiment_tag(experiment_id, "multiline tag", "value2\nvalue2\nvalue2")
    tags = mlflow_client.get_experiment(experiment_id).tags
    assert tags["multiline tag"] == "value2\nvalue2\nvalue2"


def test_set_experiment_tag_with_empty_string_as_value(mlflow_client: MlflowClient) -> None:
    experiment_id = mlflow_client.create_experiment("empty experiment tag")
    mlflow_client.set_experiment_tag(experiment_id, "tag_key", "")
    assert {"tag_key": ""}.items() <= mlflow_client.get_experiment(experiment_id).tags.items()


def test_get_experiment_by_name(mlflow_client: MlflowClient) -> None:
    experiment_id = mlflow_client.create_experiment("test_get_experiment_by_name")
    found = mlflow_client.get_experiment_by_name("test_get_experiment_by_name")
    assert (found.experiment_id, found.name) == (experiment_id, "test_get_experiment_by_name")
    assert mlflow_client.get_experiment_by_name("idontexist") is None


def test_get_experiment(mlflow_client: MlflowClient) -> None:
    experiment_id = mlflow_client.create_experiment("test_get_experiment")
    found = mlflow_client.get_experiment(experiment_id)
    assert (found.experiment_id, found.name) == (experiment_id, "test_get_experiment")


def test_search_experiments(mlflow_client: MlflowClient) -> None:
    assert mlflow_client.search_experiments()[0].name == "Default"
    ids = []
    for name, tags in [("a", {"key": "value"}), ("ab", {"key": "vaLue"}), ("Abc", None)]:
        ids.append(mlflow_client.create_experiment(name, tags=tags))

    def names(**kwargs: Any) -> list[str]:
        return [e.name for e in mlflow_client.search_experiments(**kwargs)]

    assert names(filter_string="attribute.name = 'a'") == ["a"]
    assert names(filter_string="attribute.name != 'a'") == ["Abc", "ab", "Default"]
    assert names(filter_string="name LIKE 'a%'") == ["ab", "a"]
    assert names(filter_string="tag.key = 'value'") == ["a"]
    assert names(filter_string="tag.key != 'value'") == ["ab"]
    assert names(filter_string="tag.key ILIKE '%alu%'") == ["ab", "a"]
    assert names(order_by=["name DESC"]) == ["ab", "a", "Default", "Abc"]
    first = mlflow_client.search_experiments(max_results=2)
    assert [e.name for e in first] == ["Abc", "ab"]
    assert names(page_token=first.token) == ["a", "Default"]
    mlflow_client.delete_experiment(ids[1])
    assert names(view_type=ViewType.ACTIVE_ONLY) == ["Abc", "a", "Default"]
    assert names(view_type=ViewType.DELETED_ONLY) == ["ab"]
    assert names(view_type=ViewType.ALL) == ["Abc", "ab", "a", "Default"]

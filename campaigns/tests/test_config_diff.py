"""The configuration keys that differ between runs (campaigns/domain/config_diff.py)."""

from __future__ import annotations

from campaigns.domain.config_diff import MISSING, differing_keys, flatten


def test_nested_keys_flatten_to_dotted_names() -> None:
    assert flatten({"opt": {"lr": 1e-4, "name": "adamw"}, "seed": 1}) == {
        "opt.lr": 1e-4,
        "opt.name": "adamw",
        "seed": 1,
    }


def test_only_keys_whose_values_differ_are_listed_a_missing_key_counting_as_different() -> None:
    rows = differing_keys(
        [{"seed": 1, "opt": {"lr": 2e-4}}, {"seed": 1, "opt": {"lr": 1e-4}, "rank": 16}, None]
    )
    assert rows == [
        ("opt.lr", ["0.0002", "0.0001", MISSING]),
        ("rank", [MISSING, "16", MISSING]),
        ("seed", ["1", "1", MISSING]),
    ]


def test_identical_configurations_differ_in_nothing() -> None:
    assert differing_keys([{"a": [1, 2]}, {"a": [1, 2]}]) == []

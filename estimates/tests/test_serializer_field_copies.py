"""The estimates serializers copy their declared fields for each instance more cheaply than DRF
(estimates/api/serializers/base.py `_copy_field`) and validate exactly as DRF's own copies do:
each instance's fields are its own, bound to it, with their own validators, and every body
gets the same errors or the same validated data from both."""

from __future__ import annotations

import copy
from typing import Any

from django.test import SimpleTestCase
from hypothesis import given, settings
from hypothesis import strategies as st
from rest_framework import serializers

from estimates.api.serializers import EstimatePreviewSerializer, HardwareOptionsRequestSerializer
from estimates.api.serializers.base import StrictSerializer
from estimates.tests.support import API_EXAMPLE


def strict_serializer_classes() -> list[type[StrictSerializer]]:
    found: list[type[StrictSerializer]] = []
    pending: list[type[Any]] = [StrictSerializer]
    while pending:
        for sub in pending.pop().__subclasses__():
            found.append(sub)
            pending.append(sub)
    return found


class WithDrfsCopies:
    """The same serializer with DRF's own get_fields (every declared field deep-copied)."""

    def get_fields(self) -> dict[str, Any]:
        return copy.deepcopy(self._declared_fields)  # type: ignore[attr-defined]


def with_drfs_copies(cls: type[StrictSerializer]) -> type[StrictSerializer]:
    return type(f"Drf{cls.__name__}", (WithDrfsCopies, cls), {})


def leaves(serializer: serializers.Serializer[Any]) -> list[tuple[str, Any]]:
    found = []
    for name, field in serializer.fields.items():
        found.append((name, field))
        if isinstance(field, serializers.Serializer):
            found += [(f"{name}.{n}", f) for n, f in leaves(field)]
    return found


class EachInstanceHasItsOwnBoundFields(SimpleTestCase):
    def test_every_estimates_serializer_is_covered(self) -> None:
        self.assertGreaterEqual(len(strict_serializer_classes()), 20)

    def test_two_instances_share_no_field_and_no_validator_list(self) -> None:
        for cls in strict_serializer_classes():
            a, b = leaves(cls()), leaves(cls())
            self.assertEqual([n for n, _ in a], [n for n, _ in b], cls)
            for (name, one), (_, other) in zip(a, b, strict=True):
                self.assertIsNot(one, other, f"{cls.__name__}.{name}")
                self.assertIsNot(one.validators, other.validators, f"{cls.__name__}.{name}")
                self.assertEqual(one.field_name, name.rsplit(".", 1)[-1])

    def test_each_field_is_bound_to_the_instance_that_holds_it(self) -> None:
        body = EstimatePreviewSerializer()
        for name, field in body.fields.items():
            self.assertIs(field.parent, body, name)
            self.assertIs(field.root, body, name)
        self.assertIs(body.fields["model"].fields["layers"].parent, body.fields["model"])

    def test_a_validator_added_to_one_instance_leaves_the_next_alone(self) -> None:
        first = EstimatePreviewSerializer()
        first.fields["model"].fields["layers"].validators.append(lambda value: None)
        second = EstimatePreviewSerializer()
        self.assertEqual(
            len(second.fields["model"].fields["layers"].validators),
            len(first.fields["model"].fields["layers"].validators) - 1,
        )


# Bodies near the documented example: sections dropped, fields replaced by odd values.
ODD = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=6),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


@st.composite
def bodies(draw: st.DrawFn) -> dict[str, Any]:
    body = copy.deepcopy(API_EXAMPLE)
    for section in list(body):
        if draw(st.integers(0, 5)) == 0:
            del body[section]
            continue
        if not isinstance(body[section], dict):
            continue
        for name in list(body[section]):
            choice = draw(st.integers(0, 6))
            if choice == 0:
                body[section][name] = draw(ODD)
            elif choice == 1:
                del body[section][name]
    if draw(st.booleans()):
        body[draw(st.sampled_from(["model", "extra", "training"]))] = draw(ODD)
    return body


def outcome(cls: type[StrictSerializer], body: dict[str, Any]) -> tuple[bool, Any]:
    serializer = cls(data=body)
    if serializer.is_valid():
        return True, serializer.validated_data
    return False, serializer.errors


class TheCheapCopiesValidateAsDrfsOwn(SimpleTestCase):
    def test_the_documented_example_is_valid_with_the_same_data(self) -> None:
        for cls in (EstimatePreviewSerializer, HardwareOptionsRequestSerializer):
            body = copy.deepcopy(API_EXAMPLE)
            if cls is HardwareOptionsRequestSerializer:
                body = {"model": body["model"], "training": body["training"]}
            ours = outcome(cls, body)
            self.assertEqual(ours, outcome(with_drfs_copies(cls), body))
            if cls is EstimatePreviewSerializer:
                self.assertTrue(ours[0], ours[1])

    @settings(max_examples=150, deadline=None, database=None)
    @given(body=bodies())
    def test_every_body_gets_the_same_errors_or_data(self, body: dict[str, Any]) -> None:
        for cls in (EstimatePreviewSerializer, HardwareOptionsRequestSerializer):
            self.assertEqual(outcome(cls, body), outcome(with_drfs_copies(cls), body))

"""The API's list pagination: DRF's limit/offset, with both checked and bounded.

DRF ignores a `?limit=x` or `?offset=-1` and answers the default page, so a caller's typo goes
unnoticed; here a value that is not an integer in its documented range is a 400 naming the
parameter. Unbounded, an offset beyond 64 bits would reach the database as an OFFSET it cannot
represent (a 500), and a huge limit would ask for every row at once.
"""

from __future__ import annotations

import re
from typing import Any

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import LimitOffsetPagination

MAX_LIMIT = 1000
MAX_OFFSET = 2**53
DIGITS = re.compile(r"[0-9]{1,20}")


class Pagination(LimitOffsetPagination):
    max_limit = MAX_LIMIT

    def _parameter(self, request: Any, name: str, low: int, high: int) -> int | None:
        raw = request.query_params.get(name)
        if raw is None:
            return None
        value = int(raw) if DIGITS.fullmatch(raw) else None
        if value is None or not low <= value <= high:
            raise ValidationError({name: [f"Give an integer from {low} to {high}."]})
        return value

    def get_limit(self, request: Any) -> int | None:
        limit = self._parameter(request, self.limit_query_param, 1, MAX_LIMIT)
        return self.default_limit if limit is None else limit

    def get_offset(self, request: Any) -> int:
        return self._parameter(request, self.offset_query_param, 0, MAX_OFFSET) or 0

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        bounds = {
            self.limit_query_param: {"minimum": 1, "maximum": MAX_LIMIT},
            self.offset_query_param: {"minimum": 0, "maximum": MAX_OFFSET},
        }
        parameters: list[dict[str, Any]] = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            parameter["schema"] = {**parameter["schema"], **bounds.get(parameter["name"], {})}
        return parameters

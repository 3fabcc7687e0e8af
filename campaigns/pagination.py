"""The API's list pagination: DRF's limit/offset, with both bounded.

Unbounded, a `?limit=` or `?offset=` beyond 64 bits reaches the database as a LIMIT/OFFSET it
cannot represent (a 500 on SQLite, an error on PostgreSQL); a huge limit also asks for every
row at once.
"""

from __future__ import annotations

from typing import Any

from rest_framework.pagination import LimitOffsetPagination

MAX_OFFSET = 2**53


class Pagination(LimitOffsetPagination):
    max_limit = 1000

    def get_offset(self, request: Any) -> int:
        return min(super().get_offset(request), MAX_OFFSET)

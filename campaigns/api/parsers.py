"""The API's one request parser: JSON, parsed with orjson.

Besides speed, orjson is stricter than the standard library where strictness protects the
database: it refuses lone UTF-16 surrogates (PostgreSQL cannot store them, so they would end as
a 500), numbers that overflow a double, and the bare NaN/Infinity tokens (only the metrics
endpoint accepts those, and it parses its own body). Kept free of view imports: DRF imports
parser classes while `rest_framework.views` itself is being imported.
"""

from __future__ import annotations

from typing import Any

import orjson
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser as DRFJSONParser


class JSONParser(DRFJSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        raw = stream.read() if stream is not None else b""
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise ParseError(f"JSON parse error - {exc}") from exc

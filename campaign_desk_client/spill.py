"""The spill file: batches beyond the in-memory bound, kept on disk as JSON lines and resent
first by the next Run with the same id."""

from __future__ import annotations

import contextlib
import json
import os
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from .wire import dumps


class Spill:
    """Sealed batches on disk, oldest first: one JSON line each (key and points). Rewritten
    whole when the first is let go (spilling is rare: the buffer was full)."""

    def __init__(self, directory: str | os.PathLike[str], run_id: str) -> None:
        os.makedirs(directory, exist_ok=True)
        safe = urllib.parse.quote(run_id, safe="")
        self.path = os.path.join(os.fspath(directory), f"{safe}.jsonl")
        self.batches: list[tuple[str, list[dict[str, Any]]]] = []
        if os.path.exists(self.path):
            with open(self.path, encoding="utf-8") as handle:
                for line in handle:
                    if line.strip():
                        item = json.loads(line)
                        self.batches.append((str(item["key"]), list(item["points"])))

    @property
    def points(self) -> int:
        return sum(len(points) for _, points in self.batches)

    def first(self) -> tuple[str, list[dict[str, Any]]]:
        return self.batches[0]

    def append(self, key: str, points: list[dict[str, Any]]) -> None:
        self.batches.append((key, points))
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(dumps({"key": key, "points": points}).decode() + "\n")

    def pop_first(self) -> None:
        self.batches.pop(0)
        self._rewrite()

    def clear(self) -> None:
        self.batches.clear()
        self._rewrite()

    def _rewrite(self) -> None:
        if not self.batches:
            with contextlib.suppress(FileNotFoundError):
                os.remove(self.path)
            return
        partial = self.path + ".partial"
        with open(partial, "w", encoding="utf-8") as handle:
            for key, points in self.batches:
                handle.write(dumps({"key": key, "points": points}).decode() + "\n")
        os.replace(partial, self.path)

"""Read an admin page's form as a browser would submit it, so a test can change a few fields
and post the rest unchanged (the inlines' management forms included)."""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any


class _FormReader(HTMLParser):
    def __init__(self, form_id: str) -> None:
        super().__init__()
        self.form_id = form_id
        self.inside = False
        self.data: dict[str, list[str]] = {}
        self._textarea: str | None = None
        self._select: tuple[str, bool] | None = None
        self._selected: list[str] = []
        self._first_option: str | None = None

    def _add(self, name: str, value: str) -> None:
        self.data.setdefault(name, []).append(value)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form" and a.get("id") == self.form_id:
            self.inside = True
        if not self.inside:
            return
        name = a.get("name")
        if tag == "input" and name and "__prefix__" not in name:
            kind = a.get("type", "text")
            if kind in {"submit", "button", "file"}:
                return
            if kind in {"checkbox", "radio"}:
                if "checked" in a:
                    self._add(name, a.get("value") or "on")
                return
            self._add(name, a.get("value", ""))
        elif tag == "textarea" and name and "__prefix__" not in name:
            self._textarea = name
            self._add(name, "")
        elif tag == "select" and name and "__prefix__" not in name:
            self._select = (name, "multiple" in a)
            self._selected, self._first_option = [], None
        elif tag == "option" and self._select is not None:
            if self._first_option is None:
                self._first_option = a.get("value", "")
            if "selected" in a:
                self._selected.append(a.get("value", ""))

    def handle_endtag(self, tag: str) -> None:
        if tag == "form" and self.inside:
            self.inside = False
        if tag == "textarea":
            self._textarea = None
        if tag == "select" and self._select is not None:
            name, multiple = self._select
            chosen = self._selected or ([] if multiple else [self._first_option or ""])
            for value in chosen:
                self._add(name, value)
            self._select = None

    def handle_data(self, data: str) -> None:
        if self._textarea is not None:
            values = self.data[self._textarea]
            values[-1] += data.removeprefix("\n") if not values[-1] else data


def form_data(html: str, form_id: str) -> dict[str, Any]:
    """The form's fields and values: a str per field, a list for multi-valued ones."""
    reader = _FormReader(form_id)
    reader.feed(html)
    return {k: v if len(v) > 1 else v[0] for k, v in reader.data.items()}

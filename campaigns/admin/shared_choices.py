"""Choice lists written once per page, not once per inline row (issue 21).

A stage row picks its item and the stages it follows among the campaign's own: at 200 items a
select of every item and a multi-select of every stage on each of 200 rows was 80,000
``<option>`` elements and 6.8 MB of HTML. Here a row's select holds only its chosen options
(and the blank one), so the page posts the row's values unchanged with or without a script;
the full list is written once in the page (``shared_choice_lists``, as JSON) and
``campaigns/static/campaigns/shared_choices.js`` adds the other options to every select
naming that list when the page loads. Validation still reads the field's queryset.
"""

from __future__ import annotations

from typing import Any

from django import forms

SCRIPT = "campaigns/shared_choices.js"


class SharedChoicesMixin:
    """A choice widget rendering only the chosen options; the rest come from the list
    ``list_key`` written once in the page."""

    list_key = ""
    choices: Any

    def optgroups(self, name: str, value: list[Any], attrs: dict[str, Any] | None = None) -> Any:
        chosen = {str(v) for v in value if v is not None}
        groups = []
        # The model's choices are flat (no groups). The blank option stays: a row with no
        # item must still post "".
        for index, (option, label) in enumerate(self.choices):
            key = "" if option is None else str(option)
            if key == "" or key in chosen:
                made = self.create_option(  # type: ignore[attr-defined]
                    name, option, label, key in chosen, index, attrs=attrs
                )
                groups.append((None, [made], index))
        return groups

    def get_context(self, name: str, value: Any, attrs: dict[str, Any] | None) -> Any:
        context = super().get_context(name, value, attrs)  # type: ignore[misc]
        context["widget"]["attrs"]["data-shared-choices"] = self.list_key
        return context


class SharedChoicesSelect(SharedChoicesMixin, forms.Select):
    def __init__(self, list_key: str, attrs: dict[str, Any] | None = None) -> None:
        super().__init__(attrs)
        self.list_key = list_key

    class Media:
        js = [SCRIPT]


class SharedChoicesSelectMultiple(SharedChoicesMixin, forms.SelectMultiple):
    def __init__(self, list_key: str, attrs: dict[str, Any] | None = None) -> None:
        super().__init__(attrs)
        self.list_key = list_key

    class Media:
        js = [SCRIPT]


def shared_choice_lists(inline_admin_formsets: Any) -> dict[str, list[list[str]]]:
    """Each shared list of the page's inlines as ``[[value, label], ...]``, read from the
    formset's form class, whose choices were evaluated once for the whole formset
    (campaigns/admin/tenancy.py ``choices_once``): no query here."""
    lists: dict[str, list[list[str]]] = {}
    for inline in inline_admin_formsets:
        for field in inline.formset.form.base_fields.values():
            widget = getattr(field.widget, "widget", field.widget)  # the admin's wrapper
            if isinstance(widget, SharedChoicesMixin) and widget.list_key not in lists:
                lists[widget.list_key] = [
                    [str(v), str(label)] for v, label in field.choices if str(v) != ""
                ]
    return lists

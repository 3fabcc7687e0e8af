"""One way for every admin form, inline and action to show a service's refusal (issue 18).

The services are the only writers and they refuse with Django's `ValidationError` naming the
field or the domain's state exceptions (`PlanFrozen`, `CampaignClosed`, ...). A refusal raised
while the admin saves is never a 500 and never a half-saved page:

1. the whole save (the main form, then each inline row in order) runs inside a savepoint; each
   row's write is recorded under the row's form prefix when its service refuses it
   (`refusal_of`), and the other rows are still tried so every refusal shows at once;
2. if anything was refused, the savepoint is rolled back (nothing is stored, no change message,
   no log entry) and the page is built again from the same POST, where each form gets its
   refusal as a field error beside the field (or at the top of its row), and the main form says
   that nothing was saved. Django's own rendering does the rest.

Actions get the same treatment: a refusal rolls the action back and is shown as a message.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect

from campaigns.models import CampaignClosed, CommitRefused, PlanFrozen, RunsStillRunning

# The refusals a service raises (docs/domain.md §17: a refusal names its field or the state).
REFUSALS: tuple[type[Exception], ...] = (
    ValidationError,
    PlanFrozen,
    CampaignClosed,
    CommitRefused,
    RunsStillRunning,
)
MAIN_FORM = "__main__"
_ATTR = "_admin_refusals"


class _Refused(Exception):
    """Raised inside the savepoint once the save is over, to roll it back."""


def recorded(request: HttpRequest) -> dict[str, list[Exception]]:
    found: dict[str, list[Exception]] | None = getattr(request, _ATTR, None)
    return found if found is not None else {}


@contextmanager
def refusal_of(request: HttpRequest, key: str) -> Iterator[None]:
    """Run one row's write in its own savepoint; a refusal is recorded under the row's form
    prefix instead of propagating, so the next rows are still tried."""
    try:
        with transaction.atomic():
            yield
    except REFUSALS as exc:
        store = getattr(request, _ATTR, None)
        if store is None:
            raise  # not inside a change form: the caller handles it
        store.setdefault(key, []).append(exc)


def messages_of(exc: Exception) -> list[tuple[str | None, str]]:
    """(field, message) pairs of a refusal; None is the form (or row) as a whole."""
    if isinstance(exc, ValidationError):
        if hasattr(exc, "error_dict"):
            return [
                (None if name == "__all__" else name, str(message))
                for name, errors in exc.error_dict.items()
                for error in errors
                for message in error.messages
            ]
        return [(None, message) for message in exc.messages]
    return [(None, str(exc))]


def attach(form: forms.BaseForm, refusals: list[Exception]) -> None:
    """Show the refusals on `form`: beside their field when the form has it."""
    for exc in refusals:
        for field, message in messages_of(exc):
            target = field if field in form.fields else None
            text = message if target or field is None else f"{field}: {message}"
            form.add_error(target, text)


def text_of(exc: Exception) -> str:
    return "; ".join(f"{f}: {m}" if f else m for f, m in messages_of(exc))


def _refusing_form(form_class: type[forms.BaseForm], refusals: dict[str, list[Exception]]) -> Any:
    class RefusedForm(form_class):  # type: ignore[valid-type,misc]
        def full_clean(self) -> None:
            super().full_clean()
            if not self.is_bound:
                return
            attach(self, refusals.get(self.prefix or MAIN_FORM, []))
            if self.prefix is None and self.cleaned_data is not None:
                # Whatever row was refused, the page as a whole was not saved.
                self.add_error(None, "Nothing was saved: correct the fields marked below.")

    RefusedForm.__name__ = form_class.__name__
    return RefusedForm


def _refusing_formset(formset_class: Any, refusals: dict[str, list[Exception]]) -> Any:
    class RefusedFormSet(formset_class):  # type: ignore[misc]
        def full_clean(self) -> None:
            super().full_clean()
            if not self.is_bound:
                return
            for row in self.forms:
                found = refusals.get(row.prefix, [])
                if self.can_delete and self._should_delete_form(row):
                    # A deleted row's errors are not shown by Django: name it above the table.
                    for exc in found:
                        self._non_form_errors.append(f"Row {row.prefix}: {text_of(exc)}")
                else:
                    attach(row, found)

    RefusedFormSet.__name__ = formset_class.__name__
    return RefusedFormSet


class RefusalsAsFieldErrors:
    """ModelAdmin mixin: a service's refusal during a save re-renders the form with the
    refusal beside its field, nothing stored (see the module docstring)."""

    def _changeform_view(
        self, request: HttpRequest, object_id: Any, form_url: str, extra_context: Any
    ) -> HttpResponse:
        setattr(request, _ATTR, {})
        try:
            with transaction.atomic():
                return super()._changeform_view(  # type: ignore[misc,no-any-return]
                    request, object_id, form_url, extra_context
                )
        except _Refused:
            pass
        except REFUSALS as exc:  # refused by the main form's own save
            recorded(request).setdefault(MAIN_FORM, []).append(exc)
        # Second pass over the same POST: the forms carry the refusals, so nothing validates.
        return super()._changeform_view(  # type: ignore[misc,no-any-return]
            request, object_id, form_url, extra_context
        )

    def construct_change_message(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        # Django calls this right after save_model and save_related, before any message or
        # log entry: the place to roll the save back when a row was refused.
        if recorded(request):
            raise _Refused
        return super().construct_change_message(request, *args, **kwargs)  # type: ignore[misc]

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> Any:
        form = super().get_form(request, obj, change=change, **kwargs)  # type: ignore[misc]
        refusals = recorded(request)
        return _refusing_form(form, refusals) if refusals else form

    def get_formsets_with_inlines(self, request: HttpRequest, obj: Any = None) -> Any:
        refusals = recorded(request)
        for formset, inline in super().get_formsets_with_inlines(request, obj):  # type: ignore[misc]
            yield (_refusing_formset(formset, refusals) if refusals else formset), inline

    def response_action(self, request: HttpRequest, queryset: Any) -> Any:
        try:
            with transaction.atomic():
                return super().response_action(request, queryset)  # type: ignore[misc]
        except REFUSALS as exc:
            self.message_user(request, text_of(exc), messages.ERROR)  # type: ignore[attr-defined]
            return HttpResponseRedirect(request.get_full_path())

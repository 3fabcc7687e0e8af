"""The invitation page (docs/domain.md §1.5): the person who opens an invitation's link sees
the team and the role, and accepts it signed in, or creates their account there and accepts.
Only an accept (a POST with CSRF) makes a membership; it goes through
campaigns/services/invitations.py, which locks the invitation so that a link is used once.

A link that does not work (unknown, used, expired, replaced) answers 404 with one message for
all four."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.contrib.auth import login
from django.contrib.auth.forms import UserCreationForm
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from campaigns.selectors.invitations import pending_invitation
from campaigns.services import invitations as invitation_services
from campaigns.services.invitations import InvitationUnusable

TEMPLATE = "campaigns/invitation.html"


class NewAccountForm(UserCreationForm):  # type: ignore[type-arg]
    """Username and password twice, checked by Django's password validators."""


@require_http_methods(["GET", "POST"])
def invitation_page(request: HttpRequest, token: str) -> HttpResponse:
    invitation = pending_invitation(token)
    if invitation is None:
        return _unusable(request)
    form = NewAccountForm(request.POST if request.POST.get("action") == "create" else None)
    if request.method == "POST":
        try:
            answer = _accept(request, token, form)
        except InvitationUnusable:
            return _unusable(request)
        except ValidationError as refusal:
            for field, errors in refusal.message_dict.items():
                form.add_error(field if field in form.fields else None, errors)
        else:
            if answer is not None:
                return answer
    context = {
        **admin.site.each_context(request),
        "title": f"Join {invitation.team}",
        "invitation": invitation,
        "form": form,
        "login_url": f"{reverse('admin:login')}?next={request.path}",
    }
    return render(request, TEMPLATE, context, status=400 if form.errors else 200)


def _accept(request: HttpRequest, token: str, form: NewAccountForm) -> HttpResponse | None:
    """The answer to an accept, or None when the form is to be shown again with its errors."""
    action = request.POST.get("action")
    if action == "accept":
        return _accept_signed_in(request, token)
    if action == "create":
        return _accept_new_account(request, token, form) if form.is_valid() else None
    form.add_error(None, "Choose: accept as the signed-in user, or create an account.")
    return None


def _accept_signed_in(request: HttpRequest, token: str) -> HttpResponse:
    if not request.user.is_authenticated:
        return HttpResponseRedirect(f"{reverse('admin:login')}?next={request.path}")
    membership = invitation_services.accept_invitation(token=token, acting_user=request.user)
    return _joined(request, membership)


def _accept_new_account(request: HttpRequest, token: str, form: NewAccountForm) -> HttpResponse:
    membership = invitation_services.accept_with_new_account(
        token=token,
        username=form.cleaned_data["username"],
        password=form.cleaned_data["password1"],
    )
    # The new account is signed in: it proved the address by opening the link.
    login(request, membership.user, backend="django.contrib.auth.backends.ModelBackend")
    return _joined(request, membership)


def _joined(request: HttpRequest, membership: Any) -> HttpResponse:
    messages.success(
        request,
        f"You are a member of {membership.team} ({membership.get_role_display().lower()}).",
    )
    return HttpResponseRedirect(reverse("admin:index"))


def _unusable(request: HttpRequest) -> HttpResponse:
    context = {
        **admin.site.each_context(request),
        "title": "Invitation",
        "unusable": InvitationUnusable.message,
    }
    return render(request, TEMPLATE, context, status=404)

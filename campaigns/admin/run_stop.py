"""Stopping a run from its admin page (docs/domain.md §4.3, §4.6): a person gives the reason
and, optionally, the rule the stop applies; the stop then carries that rule's grace, so the
training loop may still reach and save its next checkpoint. The training loop learns of the stop
at its next write (the client's next log call raises RunStopped). Planners and owners only; the
same service as the API's POST /runs/{run_id}/stop/ (campaigns.services.run_lifecycle.stop_run)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.auth.models import User
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse

from campaigns.admin.tenancy import WRITERS, caller_has_role
from campaigns.models import Run, RunStatus, StopRule
from campaigns.services import ingest, run_lifecycle


def rule_label(rule: StopRule) -> str:
    """A rule as the stop form lists it: what it watches and its grace (§4.6)."""
    return f"{rule} (grace: {rule.grace})"


class RuleChoice(forms.ModelChoiceField):  # type: ignore[type-arg]
    def label_from_instance(self, obj: Any) -> str:
        return rule_label(obj)


class StopRunForm(forms.Form):
    reason = forms.CharField(
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
        help_text="Kept with the run and shown to the training loop (required).",
    )
    rule = RuleChoice(
        queryset=StopRule.objects.none(),
        required=False,
        empty_label="none: a stop by hand, no grace",
        help_text="The stop rule this stop applies, if any: the loop then keeps its grace.",
    )

    def __init__(self, *args: Any, run: Run, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["rule"]
        assert isinstance(field, forms.ModelChoiceField)
        field.queryset = StopRule.objects.filter(campaign_id=run.campaign_id).order_by("id")

    def clean_reason(self) -> str:
        reason = str(self.cleaned_data["reason"]).strip()
        if not reason:
            raise forms.ValidationError("A stop needs a reason.")
        return reason


def stop_view(model_admin: Any, request: HttpRequest, object_id: str) -> HttpResponse:
    """The stop page (GET) and the stop itself (POST): refused for a run that is not running,
    404 for a run outside the caller's teams or to a viewer."""
    run = model_admin.get_object(request, object_id)
    if run is None or not caller_has_role(request, run.team_id, WRITERS):
        raise Http404("No such run.")
    change_url = reverse("admin:campaigns_run_change", args=[run.pk])
    if run.status != RunStatus.RUNNING:
        messages.warning(request, f"Run {run.run_id} is {run.get_status_display().lower()}.")
        return HttpResponseRedirect(change_url)
    form = StopRunForm(request.POST if request.method == "POST" else None, run=run)
    if request.method == "POST" and form.is_valid():
        rule = form.cleaned_data["rule"]
        try:
            stopped = run_lifecycle.stop_run(
                run=run, reason=form.cleaned_data["reason"], rule=rule, acting_user=acting(request)
            )
        except ingest.RunRefused as exc:
            form.add_error(None, str(exc))
        else:
            _log_stop(request, stopped)
            messages.success(request, _stopped_words(stopped, rule))
            return HttpResponseRedirect(change_url)
    context = {
        **model_admin.admin_site.each_context(request),
        "title": f"Stop run {run.run_id}?",
        "opts": Run._meta,
        "run": run,
        "form": form,
        "change_url": change_url,
    }
    return TemplateResponse(request, "admin/campaigns/run/stop_form.html", context)


def _stopped_words(run: Run, rule: StopRule | None) -> str:
    grace = rule.grace if rule is not None else None
    after = (
        f"; its rule's grace ({grace}) lets the loop reach its next checkpoint"
        if grace is not None and grace.given
        else ""
    )
    return f"Run {run.run_id} is stopped{after}. The training loop sees it at its next write."


def acting(request: HttpRequest) -> User | None:
    """The signed-in person who acts (the admin requires one)."""
    user = request.user
    return user if isinstance(user, User) else None


def _log_stop(request: HttpRequest, run: Run) -> None:
    """Who stopped the run, in the admin's own history of the run."""
    assert request.user.pk is not None  # the admin's pages are for signed-in users
    LogEntry.objects.log_actions(
        user_id=request.user.pk,
        queryset=[run],
        action_flag=CHANGE,
        change_message=f"Stopped: {run.stop_reason}",
        single_object=True,
    )


def stop_button(run: Run, request: HttpRequest | None) -> dict[str, Any] | None:
    """The run page's stop button: its address while the run runs and the caller may stop it."""
    if run.status != RunStatus.RUNNING or request is None:
        return None
    if not caller_has_role(request, run.team_id, WRITERS):
        return None
    return {"url": reverse("admin:campaigns_run_stop", args=[run.pk])}

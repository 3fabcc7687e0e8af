"""Links that lead somewhere (issue 18, item 5): `/` opens the admin, and MLflow's printed
"View run at http://HOST/mlflow/#/experiments/E/runs/R" opens that run's admin page.

The fragment (`#/experiments/...`) never reaches the server, so `/mlflow/` answers a tiny page
whose script reads it and goes to `/runs/R/`, which redirects to the run's admin page for a
member of the run's team (another team's run, or none, is a 404)."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.templatetags.static import static
from django.urls import reverse

from campaigns.admin.tenancy import caller_team_ids
from campaigns.models import Run

MLFLOW_UI = """<!doctype html><html lang="en" data-mlflow-landing><head><meta charset="utf-8">
<title>Campaign Desk: MLflow run</title><script src="{script}"></script></head><body>
<p id="where">Opening the run's page… (runs are in the
<a href="/admin/campaigns/run/">admin</a>).</p></body></html>"""


def mlflow_ui(request: HttpRequest) -> HttpResponse:
    """`GET /mlflow/`: where MLflow's "View run" link lands (see the module docstring); the
    script is a static file (campaigns/static/campaigns/pages.js: no inline script runs)."""
    return HttpResponse(MLFLOW_UI.format(script=static("campaigns/pages.js")))


def open_run(request: HttpRequest, run_id: str) -> HttpResponse:
    """`GET /runs/{run_id}/`: the run's admin page, for its team's members (admin login)."""
    runs = Run.objects.filter(run_id=run_id)
    if not request.user.is_superuser:
        runs = runs.filter(team_id__in=caller_team_ids(request))
    run = runs.order_by("id").first()
    if run is None:
        raise Http404("No such run.")
    return HttpResponseRedirect(reverse("admin:campaigns_run_change", args=[run.pk]))

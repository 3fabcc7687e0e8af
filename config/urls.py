from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path, re_path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView

from campaigns import links
from campaigns.api.schema import SwaggerDocs
from campaigns.views import api_not_found, health
from campaigns.views.invitations import invitation_page
from ledger.operations.prometheus import metrics_view
from ledger.views.report_pages import report_page, shared_report_page
from ledger.views.sso import api_token, link_identity, sign_out

admin.site.site_header = "Campaign Desk"
admin.site.site_title = "Campaign Desk"
admin.site.index_title = "Plan and track training campaigns"
# At 1366 px the app list beside every page squeezed the lists (a title wrapped word by word,
# the report's download links behind a sideways scroll): the index and breadcrumbs lead back.
admin.site.enable_nav_sidebar = False
SITE_NAMES = {"site_header": admin.site.site_header, "site_title": admin.site.site_title}

urlpatterns = [
    # The catalog became its own app (docs/architecture.md): old admin links keep working.
    re_path(
        r"^admin/estimates/(?P<model>gpumodel|rentalplan)/(?P<rest>.*)$",
        RedirectView.as_view(url="/admin/catalog/%(model)s/%(rest)s", query_string=True),
    ),
    # `/` (and so the admin's "View site") opens the admin: there is no other front page.
    path("", RedirectView.as_view(url="/admin/", permanent=False)),
    # Before the admin's own: also ends the identity provider's session (ledger/views/sso.py).
    path("admin/logout/", sign_out, name="sign-out"),
    path("admin/", admin.site.urls),
    path("runs/<str:run_id>/", admin.site.admin_view(links.open_run), name="open-run"),
    # A closing report in the browser: team members signed in, and a shared link signed out
    # (ledger/views/report_pages.py, docs/domain.md §16.4).
    path("reports/<int:pk>/", admin.site.admin_view(report_page), name="report-page"),
    path("shared/reports/<str:token>/", shared_report_page, name="shared-report"),
    # MLflow's "View run at …/mlflow/#/experiments/E/runs/R" (campaigns/links.py).
    path("mlflow/", links.mlflow_ui, name="mlflow-ui"),
    # The one-time link a new member gets sets their password (campaigns/admin/teams.py).
    # Outside the admin site, so its header is passed: else the page says "Django administration".
    path(
        "accounts/reset/<uidb64>/<token>/",
        auth_views.PasswordResetConfirmView.as_view(extra_context=SITE_NAMES),
        name="password_reset_confirm",
    ),
    path(
        "accounts/reset/done/",
        auth_views.PasswordResetCompleteView.as_view(extra_context=SITE_NAMES),
        name="password_reset_complete",
    ),
    path("api/v1/health/", health, name="health"),
    path("api/v1/schema/", SpectacularAPIView.as_view(), name="schema"),
    # The split view serves Swagger UI's start-up script as a file of its own (?script=): the
    # Content-Security-Policy runs no inline script (campaigns/api/schema.py, SwaggerDocs).
    path("api/v1/docs/", SwaggerDocs.as_view(url_name="schema"), name="docs"),
    path("api/v1/", include("campaigns.api.urls")),
    path("api/v1/", include("estimates.api.urls")),
    path("api/v1/", include("ledger.api.urls")),
    path("mlflow/", include("mlflow_api.urls")),
    path("metrics", metrics_view, name="metrics"),
    path("oidc/", include("mozilla_django_oidc.urls")),
    # A team invitation's link: the invitee accepts there (campaigns/views/invitations.py).
    path("accounts/invitations/<str:token>/", invitation_page, name="invitation"),
    path("accounts/token/", api_token, name="api-token"),
    path("accounts/sso/link/", link_identity, name="sso-link"),
    # Keep last: any other /api/ path is a JSON 404, with DEBUG on or off.
    re_path(r"^api/", api_not_found),
]

# Errors raised outside DRF answer JSON under /api/ and Django's pages elsewhere.
handler400 = "campaigns.views.bad_request"
handler403 = "campaigns.views.permission_denied"
handler404 = "campaigns.views.page_not_found"
handler500 = "campaigns.views.server_error"

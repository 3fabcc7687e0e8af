from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from campaigns.views import health

admin.site.site_header = "Campaign Desk"
admin.site.site_title = "Campaign Desk"
admin.site.index_title = "Plan and track training campaigns"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/health/", health, name="health"),
    path("api/v1/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/v1/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
    path("api/v1/", include("campaigns.urls")),
    path("api/v1/", include("estimates.urls")),
    path("api/v1/", include("ledger.urls")),
]

"""What the MLflow facade keeps besides the runs themselves: the "logged models" that
`mlflow.autolog` and `log_model` create (MLflow 3), so a GET after a POST answers the same model.

A logged model belongs to a campaign (MLflow's experiment) and, usually, to the run that produced
it; its files are kept as that run's artifacts under `models/<model_id>/` (docs/mlflow.md).
"""

from __future__ import annotations

from django.db import models

from campaigns.models import Campaign, Run


class LoggedModelStatus(models.TextChoices):
    PENDING = "LOGGED_MODEL_PENDING", "Pending"
    READY = "LOGGED_MODEL_READY", "Ready"
    UPLOAD_FAILED = "LOGGED_MODEL_UPLOAD_FAILED", "Upload failed"


class LoggedModel(models.Model):
    model_id = models.CharField(max_length=40, unique=True)
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="+")
    source_run = models.ForeignKey(
        Run, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    name = models.CharField(max_length=250)
    model_type = models.CharField(max_length=250, blank=True)
    status = models.CharField(
        max_length=30, choices=LoggedModelStatus.choices, default=LoggedModelStatus.PENDING
    )
    tags = models.JSONField(default=dict, blank=True)
    params = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.model_id})"

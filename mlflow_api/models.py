"""What the MLflow facade keeps besides the runs themselves (docs/mlflow.md):

- `Experiment`: a named group of runs inside a campaign (`set_experiment("lora-sweep")`). The
  campaign stays the boundary of what a key sees and its rules apply to every run in it; the
  campaign itself is the **default experiment** (id = the campaign id; its tags live on the row
  named "" so `set_experiment_tag` works on it too).
- `MlflowRun`: a run's MLflow side: its experiment (none: the campaign's default) and the
  client's own `start_time` / `end_time` in ms, kept and echoed as sent (the hours are
  Campaign Desk's, docs/domain.md §8).
- `LoggedModel`: the "logged models" `mlflow.autolog` and `log_model` create (MLflow 3); their
  files are kept as their source run's artifacts under `models/<model_id>/`, or, for a model
  logged outside a run, as `LoggedModelArtifact` rows of their own.
"""

from __future__ import annotations

from django.db import models

from campaigns.models import Campaign, Run

# The row that holds the campaign's (the default experiment's) tags.
DEFAULT_NAME = ""


class Experiment(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="+")
    name = models.CharField(max_length=500, blank=True)
    tags = models.JSONField(default=dict, blank=True)
    deleted_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "name"], name="mlflow_experiment_name_unique_in_campaign"
            )
        ]

    def __str__(self) -> str:
        return self.name or f"campaign {self.campaign_id}"

    @property
    def experiment_id(self) -> str:
        """`<campaign id>-<n>`: never a campaign id, so an id says which campaign it is in."""
        return (
            str(self.campaign_id) if self.name == DEFAULT_NAME else f"{self.campaign_id}-{self.pk}"
        )


class MlflowRun(models.Model):
    run = models.OneToOneField(
        Run, on_delete=models.CASCADE, primary_key=True, related_name="mlflow"
    )
    experiment = models.ForeignKey(
        Experiment, null=True, blank=True, on_delete=models.CASCADE, related_name="runs"
    )
    start_time_ms = models.BigIntegerField(null=True, blank=True)
    end_time_ms = models.BigIntegerField(null=True, blank=True)

    def __str__(self) -> str:
        return f"MLflow side of {self.run_id}"


class LoggedModelStatus(models.TextChoices):
    PENDING = "LOGGED_MODEL_PENDING", "Pending"
    READY = "LOGGED_MODEL_READY", "Ready"
    UPLOAD_FAILED = "LOGGED_MODEL_UPLOAD_FAILED", "Upload failed"


class LoggedModel(models.Model):
    model_id = models.CharField(max_length=40, unique=True)
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="+")
    experiment = models.ForeignKey(
        Experiment, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    source_run = models.ForeignKey(
        Run, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The source run id as the client sent it: MLflow keeps one that names no run (nor does
    # this facade refuse it); `source_run` is set when it names a run of the campaign.
    source_run_ref = models.CharField(max_length=200, blank=True)
    name = models.CharField(max_length=250)
    model_type = models.CharField(max_length=250, blank=True)
    status = models.CharField(
        max_length=30, choices=LoggedModelStatus.choices, default=LoggedModelStatus.PENDING
    )
    tags = models.JSONField(default=dict, blank=True)
    params = models.JSONField(default=dict, blank=True)
    deleted_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.model_id})"


class LoggedModelArtifact(models.Model):
    """A file of a logged model that has no source run (logged outside a run)."""

    model = models.ForeignKey(LoggedModel, on_delete=models.CASCADE, related_name="files")
    path = models.CharField(max_length=500)
    size_bytes = models.BigIntegerField()
    sha256 = models.CharField(max_length=64)
    storage_name = models.CharField(max_length=700)
    content_type = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["path"]
        constraints = [
            models.UniqueConstraint(fields=["model", "path"], name="logged_model_file_path_unique")
        ]

    def __str__(self) -> str:
        return self.path

"""The closed vocabularies of campaigns: statuses, tiers, roles of items, kinds of rules,
stages and runs (stored as their short values)."""

from __future__ import annotations

from django.db import models


class CampaignStatus(models.TextChoices):
    DRAFT = "draft", "Draft"
    COMMITTED = "committed", "Committed"
    RUNNING = "running", "Running"
    CLOSED = "closed", "Closed"


class ItemRole(models.TextChoices):
    BASELINE = "baseline", "Baseline"
    VARIANT = "variant", "Variant"
    DATA_CHECK = "data_check", "Data check"
    RESUME_CHECK = "resume_check", "Resume check"
    OTHER = "other", "Other"


class Tier(models.TextChoices):
    MANDATORY = "mandatory", "Mandatory"
    USEFUL = "useful", "Useful"
    EXPLORATORY = "exploratory", "Exploratory"


class ItemStatus(models.TextChoices):
    PLANNED = "planned", "Planned"
    DONE = "done", "Done"
    CUT = "cut", "Cut"
    STOPPED = "stopped", "Stopped"


class StopRuleKind(models.TextChoices):
    NON_FINITE_LOSS = "non_finite_loss", "Non-finite loss (NaN/±Inf)"
    METRIC_THRESHOLD = "metric_threshold", "Metric beyond a threshold"
    INPUT_TRUNCATED = "input_truncated", "Essential input truncated"
    NO_USABLE_RESUME = "no_usable_resume", "No usable resume"
    BUDGET_OVERRUN = "budget_overrun", "Budget or time overrun"
    CUSTOM = "custom", "Custom (free text)"
    IDLE_GPU = "idle_gpu", "Idle GPU (utilisation under a threshold for N minutes)"


class Comparator(models.TextChoices):
    LT = "lt", "<"
    LE = "le", "≤"
    GT = "gt", ">"
    GE = "ge", "≥"


class Outcome(models.TextChoices):
    PENDING = "pending", "Pending (planned decision point)"
    CONTINUE = "continue", "Continue"
    CUT = "cut", "Cut optional variants"
    REVISE = "revise", "Revise the question"


class StageKind(models.TextChoices):
    SETUP = "setup", "Setup / installation"
    LOADING = "loading", "Data loading"
    PILOT = "pilot", "Pilot"
    TRAINING = "training", "Training"
    VALIDATION = "validation", "Validation"
    LONG_INPUTS = "long_inputs", "Long inputs"
    INFERENCE = "inference", "Inference / predictions"
    OUTPUTS = "outputs", "Writing outputs"
    CHECKPOINT_IO = "checkpoint_io", "Checkpoint write/transfer/restore"
    RETRIEVAL = "retrieval", "Retrieval of results"
    HUMAN_PREP = "human_prep", "Human preparation"
    ANALYSIS = "analysis", "Human analysis of the results"


class RunKind(models.TextChoices):
    PILOT = "pilot", "Pilot"
    FULL = "full", "Full"
    INFERENCE = "inference", "Inference"


class RunStatus(models.TextChoices):
    RUNNING = "running", "Running"
    STOPPED = "stopped", "Stopped by a rule"
    COMPLETED = "completed", "Completed"
    FAILED = "failed", "Failed"

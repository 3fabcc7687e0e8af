"""Reads of the MLflow facade (no writes)."""

"""Pure rules of the MLflow facade (no Django, no I/O)."""

"""The write path of the campaigns app: one module per concept, one `@transaction.atomic`,
keyword-only function per action, each taking the person who acts (`acting_user`).

campaigns.py (create, edit, close), plans.py (commit; the draft rule), items.py, stop_rules.py,
stages.py, lots.py, observed_hours.py, decisions.py, keys.py (ingest keys, API tokens), teams.py;
the run data: ingest.py, run_log.py, run_lifecycle.py, run_clock.py, run_hours.py,
checkpoints.py, stop_checks.py, metric_*.py, artifact_*.py. Nothing is re-exported here: import
the module of the concept.
"""

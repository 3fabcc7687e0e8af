"""Signals the campaigns services send, so that the layers above can act on a domain event
without the bottom layer knowing them (docs/domain.md §17).

Receivers run inside the sender's transaction: what they write commits or rolls back with the
event itself (the ledger posts the reserved lots in the same transaction as the commit).
"""

from django.dispatch import Signal

# Sent by services.plans.commit_plan before the baseline is frozen, in its transaction; kwargs:
# campaign, user, acknowledged (the caller accepted going over the team's budget). A receiver
# refuses the commit by raising models.CommitOverTeamBudget (the ledger's team budget, §22).
plan_commit_requested = Signal()

# Sent by services.plans.commit_plan once the baseline is frozen; kwargs: campaign, baseline, user.
plan_committed = Signal()

# Sent by run_lifecycle.finish_run (and the silence sweep) the first time a run is finished
# (its hours are final); kwargs: run. The ledger posts an hourly run's cost here
# (docs/domain.md §18).
run_finished = Signal()

# Sent by ingest when a run is stopped, by a rule (at a metric batch, a checkpoint, a budget
# check) or by a person (stop_run), in the stop's transaction; kwargs: run. The ledger tells
# the team on its alert channels (docs/domain.md §19.7).
run_stopped = Signal()

# Sent by services.teams.create_team once the team exists; kwargs: team. The ledger gives it
# its default alert channel (e-mail to its owners, docs/domain.md §19.3).
team_created = Signal()
# Sent by run_hours.correct_run_hours once a person corrected an ended run's hours; kwargs:
# run, correction. The ledger adjusts an hourly run's posted cost (docs/domain.md §5.8).
run_hours_corrected = Signal()

# Asked by ingest before a budget_overrun rule is applied: each receiver answers the campaign's
# spend so far (a Decimal in its currency) or None. kwargs: campaign_id, now. The ledger
# answers (incurred + hourly accrual not yet posted); without a receiver nothing is spent.
spend_requested = Signal()

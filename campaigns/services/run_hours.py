"""A person's correction of a run's hours (docs/domain.md §5.8): the run's clock measured them,
or its finish stated them; a planner who knows better sets them with a reason. Kept like an
amendment (RunHoursCorrection: before, after, who, when, why); the run's `observed_hours` is
the corrected figure, which observed hours and the run's cost read from then on. The ledger
follows (`run_hours_corrected`: an hourly run's posted cost is adjusted by a new entry)."""

from __future__ import annotations

from decimal import Decimal

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction

from campaigns import signals
from campaigns.domain.formatting import format_hours
from campaigns.models import Run, RunHoursCorrection
from campaigns.services import ingest
from campaigns.services.run_events import announce_run_save
from campaigns.services.run_log import lock_run


def check_correction(run: Run, *, hours: Decimal, reason: str) -> None:
    """Refuse what `correct_run_hours` would not record: a run still running (RunRefused, 409),
    no reason, or the hours it has already (ValidationError naming the field)."""
    if run.finished_at is None:
        raise ingest.RunRefused(
            f"run {run.run_id!r} is {run.status}: its hours are corrected once it has ended",
            run,
        )
    if not reason.strip():
        raise ValidationError({"observed_reason": "say why the run's hours are not its own"})
    if run.observed_hours == hours:
        raise ValidationError(
            {"observed_hours": f"the run's hours are {format_hours(hours)} h already"}
        )


@transaction.atomic
def correct_run_hours(
    *, run: Run, hours: Decimal, reason: str, acting_user: User | None
) -> RunHoursCorrection:
    """Set an ended run's hours to `hours`, keeping the correction. A closed campaign refuses
    (RunRefused: its figures are final)."""
    run = lock_run(Run.objects.filter(pk=run.pk), run.run_id)
    check_correction(run, hours=hours, reason=reason)
    correction = RunHoursCorrection.objects.create(
        run=run,
        before=run.observed_hours,
        after=hours,
        reason=reason.strip(),
        made_by=acting_user if getattr(acting_user, "pk", None) else None,
    )
    run.observed_hours = hours
    run.observed_reason = correction.reason
    run.save(update_fields=["observed_hours", "observed_reason"])
    announce_run_save(run, ["observed_hours"])
    signals.run_hours_corrected.send(sender=Run, run=run, correction=correction)
    return correction

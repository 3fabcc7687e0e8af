"""A run locked for a write, and its campaign read after the lock, in one round trip to
PostgreSQL (issue 34 item 5: a synchronous MLflow call's time is mostly its round trips).

The two stay two statements: the campaign must be read after the lock is held (closing a
campaign locks every run of it first, so a write that waited for that lock sees the campaign
closed), and in READ COMMITTED each statement sees what committed before it began, even when
both are sent in one string: the second begins once the first holds its lock. On SQLite (whose
driver takes one statement a call) they are sent one after the other.
"""

from __future__ import annotations

from typing import Any

from django.db import connections, router
from django.db.models import Model, QuerySet

from campaigns.models import Campaign, Run


def _compiled(query: QuerySet[Any], alias: str) -> tuple[Any, str, tuple[Any, ...]]:
    compiler = query.query.get_compiler(alias)
    sql, params = compiler.as_sql()
    return compiler, sql, tuple(params)


def _instances(
    compiler: Any, model: type[Model], rows: list[tuple[Any, ...]], alias: str
) -> list[Any]:
    """Model instances of `rows` as the ORM would build them (its converters applied)."""
    select, klass_info = compiler.select, compiler.klass_info
    names = [select[i][0].target.attname for i in klass_info["select_fields"]]
    converted = compiler.results_iter(results=[rows])
    return [model.from_db(alias, names, tuple(row)) for row in converted]


def lock_with_campaign(runs: QuerySet[Run], run_id: str) -> tuple[Run | None, Campaign | None]:
    """The first run `run_id` among `runs` (as `.first()` orders), locked FOR UPDATE, and its
    campaign as committed once the lock is held; (None, None) when there is no such run."""
    locking = runs.select_for_update().filter(run_id=run_id)
    locking = (locking if locking.ordered else locking.order_by("pk"))[:1]
    alias = router.db_for_write(Run)
    connection = connections[alias]
    if connection.vendor != "postgresql":
        run = locking.first()
        return run, (Campaign.objects.get(pk=run.campaign_id) if run is not None else None)
    # Every campaign of a run the scope names `run_id` (one as a rule); the locked one's is
    # picked below.
    campaigns = Campaign.objects.filter(pk__in=runs.filter(run_id=run_id).values("campaign_id"))
    run_compiler, run_sql, run_params = _compiled(locking, alias)
    campaign_compiler, campaign_sql, campaign_params = _compiled(campaigns, alias)
    with connection.cursor() as cursor:
        cursor.execute(f"{run_sql};\n{campaign_sql}", (*run_params, *campaign_params))
        run_rows = cursor.fetchall()
        cursor.cursor.nextset()
        campaign_rows = cursor.fetchall()
    found = _instances(run_compiler, Run, run_rows, alias)
    if not found:
        return None, None
    run = found[0]
    by_pk = {c.pk: c for c in _instances(campaign_compiler, Campaign, campaign_rows, alias)}
    return run, by_pk.get(run.campaign_id)

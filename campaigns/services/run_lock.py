"""A run locked for a write, and its campaign read after the lock, in one round trip to
PostgreSQL (issue 34 item 5: a synchronous MLflow call's time is mostly its round trips).

The two stay two statements: the campaign must be read after the lock is held (closing a
campaign locks every run of it first, so a write that waited for that lock sees the campaign
closed), and in READ COMMITTED each statement sees what committed before it began, even when
both are sent in one string: the second begins once the first holds its lock. On SQLite (whose
driver takes one statement a call) they are sent one after the other.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from django.db import connections, router
from django.db.models import Exists, Model, QuerySet

from campaigns.models import Campaign, IngestKey, Run


@dataclass(frozen=True)
class KeyScope:
    """The runs of one campaign, as an ingest key reaches them; with `key_id`, only while that
    key is unrevoked (checked in the locking statement itself: mlflow_api/auth.py). Its
    statements are compiled once per process, the values bound each call: compiling the ORM's
    query of a run was half a logging call's CPU."""

    campaign_id: int
    key_id: int | None = None

    def runs(self) -> QuerySet[Run]:
        runs = Run.objects.filter(campaign_id=self.campaign_id)
        if self.key_id is not None:
            active = IngestKey.objects.filter(pk=self.key_id, revoked_at__isnull=True)
            runs = runs.filter(Exists(active))
        return runs


# Stand-ins compiled into the templates, replaced by each call's values.
_CAMPAIGN, _KEY, _RUN = -7_340_001, -7_340_002, "\x00run id\x00"
_templates: dict[tuple[str, bool], tuple[Any, str, tuple[Any, ...], Any, str, tuple[Any, ...]]]
_templates = {}
_templates_lock = threading.Lock()


def _template(
    alias: str, keyed: bool
) -> tuple[Any, str, tuple[Any, ...], Any, str, tuple[Any, ...]]:
    found = _templates.get((alias, keyed))
    if found is None:
        scope = KeyScope(_CAMPAIGN, _KEY if keyed else None)
        locking = scope.runs().select_for_update().filter(run_id=_RUN)
        locking = (locking if locking.ordered else locking.order_by("pk"))[:1]
        campaign = Campaign.objects.filter(pk=_CAMPAIGN)
        found = (*_compiled(locking, alias), *_compiled(campaign, alias))
        with _templates_lock:
            _templates[(alias, keyed)] = found
    return found


def _bound(params: tuple[Any, ...], scope: KeyScope, run_id: str) -> tuple[Any, ...]:
    values = {_CAMPAIGN: scope.campaign_id, _KEY: scope.key_id, _RUN: run_id}
    return tuple(values.get(p, p) if isinstance(p, int | str) else p for p in params)


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


def lock_with_campaign(
    runs: QuerySet[Run] | KeyScope, run_id: str, *, durable: bool = True
) -> tuple[Run | None, Campaign | None]:
    """The first run `run_id` among `runs` (as `.first()` orders), locked FOR UPDATE, and its
    campaign as committed once the lock is held; (None, None) when there is no such run.

    `durable=False` (PostgreSQL): this transaction's COMMIT does not wait for the WAL's flush
    to disk (`SET LOCAL synchronous_commit TO off`, sent with the lock: no round trip of its
    own). A crash of the database server (not of the app) may then lose the last fraction of a
    second of acknowledged writes, never leave them half done (docs/mlflow.md, "Speed")."""
    alias = router.db_for_write(Run)
    connection = connections[alias]
    if connection.vendor != "postgresql":
        scoped = runs.runs() if isinstance(runs, KeyScope) else runs
        run = scoped.select_for_update().filter(run_id=run_id).first()
        return run, (Campaign.objects.get(pk=run.campaign_id) if run is not None else None)
    if isinstance(runs, KeyScope):
        template = _template(alias, runs.key_id is not None)
        run_compiler, run_sql, run_params, campaign_compiler, campaign_sql, campaign_params = (
            template
        )
        run_params = _bound(run_params, runs, run_id)
        campaign_params = _bound(campaign_params, runs, run_id)
    else:
        locking = runs.select_for_update().filter(run_id=run_id)
        locking = (locking if locking.ordered else locking.order_by("pk"))[:1]
        # Every campaign of a run the scope names `run_id` (one as a rule); the locked one's is
        # picked below.
        campaigns = Campaign.objects.filter(pk__in=runs.filter(run_id=run_id).values("campaign_id"))
        run_compiler, run_sql, run_params = _compiled(locking, alias)
        campaign_compiler, campaign_sql, campaign_params = _compiled(campaigns, alias)
    relax = "" if durable else "SET LOCAL synchronous_commit TO off;\n"
    with connection.cursor() as cursor:
        cursor.execute(f"{relax}{run_sql};\n{campaign_sql}", (*run_params, *campaign_params))
        if relax:
            cursor.cursor.nextset()
        run_rows = cursor.fetchall()
        cursor.cursor.nextset()
        campaign_rows = cursor.fetchall()
    found = _instances(run_compiler, Run, run_rows, alias)
    if not found:
        return None, None
    run = found[0]
    by_pk = {c.pk: c for c in _instances(campaign_compiler, Campaign, campaign_rows, alias)}
    return run, by_pk.get(run.campaign_id)

"""The parallel workers' test databases, copied from one migrated template (PostgreSQL).

Each pytest-xdist worker used to build its own test database by running every migration:
three times the same ~9 s of Python and PostgreSQL work at the start of `make test`, the
workers competing for the two cores. Now the first worker to arrive builds
`test_<name>_tpl_<digest>` once, under an advisory lock, and every worker copies it with
`CREATE DATABASE … TEMPLATE` (a file copy, a fraction of a second). The digest covers what
decides the migrated database's contents: the project's application code (its models and
migrations among it), every installed app's migrations and Django's version. A template
whose digest matches is the database those migrations build, so a later run (another
`make test`, CI on the same server) copies it without migrating; a change to any of those
files names a new template and the old ones are dropped.

A template is built under a temporary name and renamed once complete, so a run interrupted
mid-migration never leaves a half-built template to copy.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# The project's own packages whose code decides what the migrations and post_migrate build.
PROJECT_PACKAGES = ("catalog", "campaigns", "estimates", "ledger", "mlflow_api", "config")
LOCK = "campaign-desk test template"


@functools.cache
def digest() -> str:
    """A short digest of every file that decides what a migrated test database holds (read
    once a process: the code does not change under a running suite)."""
    import django
    from django.apps import apps

    # Named relative to their package, so that two checkouts of one commit (CI's clean clone)
    # agree on the digest.
    files: dict[str, Path] = {}
    for package in PROJECT_PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "tests" not in path.parts:
                files[str(path.relative_to(ROOT))] = path
    for app in apps.get_app_configs():
        for path in Path(app.path).glob("migrations/*.py"):
            files.setdefault(f"{app.label}/migrations/{path.name}", path)
    return digest_of(django.__version__, {name: path.read_bytes() for name, path in files.items()})


def digest_of(version: str, files: dict[str, bytes]) -> str:
    """The first 12 hex digits of SHA-256 over `version` and each file's name and contents,
    in name order."""
    hasher = hashlib.sha256(version.encode())
    for name in sorted(files):
        hasher.update(name.encode())
        hasher.update(files[name])
    return hasher.hexdigest()[:12]


def template_name(worker_database: str, worker: str) -> str:
    """`test_<name>_tpl_<digest>` for the worker database `test_<name>_<worker>`."""
    base = worker_database.removesuffix(f"_{worker}")
    return f"{base}_tpl_{digest()}"


def copy_for_worker(connection: Any, worker: str, verbosity: int = 0) -> str:
    """Give this worker a fresh test database copied from the template, building the template
    first if no worker has yet; returns the worker database's name and points `connection`
    (and settings) at it."""
    worker_database = connection.creation._get_test_db_name()
    template = template_name(worker_database, worker)
    with connection._nodb_cursor() as server:
        server.execute("SELECT pg_advisory_lock(hashtext(%s))", [LOCK])
        try:
            if not database_exists(server, template):
                _build(connection, server, template, verbosity)
            quote = connection.ops.quote_name
            server.execute(f"DROP DATABASE IF EXISTS {quote(worker_database)} WITH (FORCE)")
            server.execute(f"CREATE DATABASE {quote(worker_database)} TEMPLATE {quote(template)}")
        finally:
            server.execute("SELECT pg_advisory_unlock(hashtext(%s))", [LOCK])
    _point_at(connection, worker_database)
    return str(worker_database)


def existing_template(connection: Any, worker: str) -> str | None:
    """The current template of `connection`'s test database if it has been built, else None."""
    template = template_name(connection.settings_dict["NAME"], worker)
    with connection._nodb_cursor() as server:
        return template if database_exists(server, template) else None


def database_exists(server: Any, name: str) -> bool:
    """Whether the server `server` (a cursor on it) holds a database `name`."""
    server.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
    return server.fetchone() is not None


def _build(connection: Any, server: Any, template: str, verbosity: int) -> None:
    """Migrate a database as pytest-django would, under a temporary name, then rename it to
    `template`; the templates of other digests are dropped."""
    quote = connection.ops.quote_name
    building = f"{template}_building"
    test_settings = connection.settings_dict["TEST"]
    worker_database = test_settings["NAME"]
    test_settings["NAME"] = building
    try:
        # autoclobber: a `_building` left by an interrupted run is dropped and rebuilt.
        connection.creation.create_test_db(verbosity=verbosity, autoclobber=True, serialize=False)
    finally:
        test_settings["NAME"] = worker_database
    connection.close()
    drop_other_templates(server, template, quote)
    server.execute(f"ALTER DATABASE {quote(building)} RENAME TO {quote(template)}")


def drop_other_templates(server: Any, template: str, quote: Any) -> list[str]:
    """Drop the templates of the same test database built for other digests (the code has
    changed since); returns their names. `template` and its `_building` copy are kept."""
    base = template.rsplit("_tpl_", 1)[0]
    server.execute(
        "SELECT datname FROM pg_database WHERE datname LIKE %s AND datname NOT IN (%s, %s)",
        [base.replace("_", r"\_") + r"\_tpl\_%", template, f"{template}_building"],
    )
    stale = sorted(name for (name,) in server.fetchall())
    for name in stale:
        server.execute(f"DROP DATABASE IF EXISTS {quote(name)} WITH (FORCE)")
    return stale


def _point_at(connection: Any, name: str) -> None:
    from django.conf import settings

    connection.close()
    settings.DATABASES[connection.alias]["NAME"] = name
    connection.settings_dict["NAME"] = name
    connection.ensure_connection()

"""No test empties the shared Redis database.

The parallel test workers share one Redis (each under its own key prefix), and so do the Celery
workers' queues. Django's `RedisCache.clear()` is a FLUSHDB: it ignores the prefix, so a test
calling it wiped the other workers' throttle buckets mid-test (CI once saw 20 requests admitted
under a limit of 10) and their queued tasks. `campaigns.tests.factories.clear_cache` deletes
only this worker's keys; it is the one place allowed to call `cache.clear()` (on the local
memory cache, where the process owns it).
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FLUSH = re.compile(r"\bcache\.clear\(|\.flushdb\(|\.flushall\(|FLUSHDB|FLUSHALL")
ALLOWED = {Path("campaigns/tests/factories.py")}


def flushes(source: str) -> bool:
    return FLUSH.search(source) is not None


def test_the_flush_reader_sees_each_way_of_emptying_redis() -> None:
    assert flushes("    cache.clear()\n")
    assert flushes("client.flushdb()")
    assert flushes("redis-cli FLUSHALL")
    assert not flushes("self.batches.clear()")
    assert not flushes("clear_cache()")


def test_no_test_outside_the_shared_helper_flushes_the_shared_redis() -> None:
    offenders = [
        str(path.relative_to(ROOT))
        for path in suite_modules()
        if path.relative_to(ROOT) not in ALLOWED
        and path != Path(__file__).resolve()
        and flushes(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def suite_modules() -> list[Path]:
    """The conftest and every module under a `tests` directory of the project's packages."""
    found = [ROOT / "conftest.py"]
    for top in sorted(ROOT.iterdir()):
        if (top.is_dir() and (top / "__init__.py").is_file()) or top.name == "tests":
            found += [path for path in sorted(top.rglob("*.py")) if "tests" in path.parts]
    assert len(found) > 50, found  # the walk found the suite
    return found

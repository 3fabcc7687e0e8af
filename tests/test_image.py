"""The production image builds: its Dockerfile copies everything the project needs.

Docker does not run here, so this lays out exactly the files the Dockerfile's COPY lines copy
into a temporary directory and runs there what the build and the containers run:
`collectstatic` and `compileall` (the build step), `check --deploy` with the environment
docker-compose.yml sets, and `migrate --plan` against a throwaway SQLite database. The
interpreter is kept from importing the project from anywhere else (the development checkout is
installed editable).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
DOCKERFILE = ROOT / "Dockerfile"

# manage.py with the editable install's finder removed: a module the image lacks must fail to
# import, not be found in the checkout.
BOOT = (
    "import runpy, sys; "
    "sys.meta_path[:] = [f for f in sys.meta_path if '__editable__' not in "
    "str(getattr(f, '__module__', ''))]; "
    "sys.argv = ['manage.py', *sys.argv[1:]]; "
    "runpy.run_path('manage.py', run_name='__main__')"
)


def instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    joined = text.replace("\\\n", " ")
    found = []
    for line in joined.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            found.append((word.upper(), rest.strip()))
    return found


def lay_out(dockerfile: str, into: Path) -> Path:
    """Copy what the COPY lines copy (from the repository) under `into`; return the WORKDIR."""
    workdir = Path("/")
    for word, rest in instructions(dockerfile):
        if word == "WORKDIR":
            workdir = workdir / rest
        elif word == "COPY":
            args = [a for a in shlex.split(rest) if not a.startswith("--")]
            *sources, dest = args
            target = into / (workdir / dest).relative_to("/")
            for source in sources:
                origin = ROOT / source
                if origin.is_dir():
                    destination = target if len(sources) == 1 else target / origin.name
                    shutil.copytree(
                        origin, destination, ignore=shutil.ignore_patterns("__pycache__")
                    )
                else:
                    destination = target / origin.name if dest.endswith("/") else target
                    destination.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(origin, destination)
    return into / workdir.relative_to("/")


def compose_env() -> dict[str, str]:
    """What docker-compose.yml gives web and worker, with its ${…} filled in."""
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    env = dict(compose["services"]["web"]["environment"])
    env["SECRET_KEY"] = "image-test-" + "k" * 50
    env["CSRF_TRUSTED_ORIGINS"] = "https://localhost"
    env["ALLOWED_HOSTS"] = "localhost"
    return {k: str(v) for k, v in env.items()}


def manage(app: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTHONPATH", "DJANGO_", "PYTEST_", "CELERY_", "REDIS_"))
        and k not in {"DATABASE_URL", "STATIC_ROOT", "MEDIA_ROOT", "DEBUG", "SECRET_KEY"}
    }
    return subprocess.run(
        [sys.executable, "-c", BOOT, *args],
        cwd=app,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def build_and_check(dockerfile: str, tmp_path: Path) -> list[str]:
    """The failures of the build step and the containers' checks for `dockerfile`."""
    app = lay_out(dockerfile, tmp_path / "image")
    env = {"DEBUG": "0", **compose_env(), "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}"}
    steps = {
        # The build step, as the Dockerfile runs it (no database, no broker yet).
        "collectstatic": (
            ["collectstatic", "--noinput"],
            {"DEBUG": "0", "SECRET_KEY": "build", "ALLOWED_HOSTS": "build"},
        ),
        "check --deploy": (["check", "--deploy", "--fail-level", "WARNING"], env),
        "migrate --plan": (["migrate", "--plan"], env),
    }
    failures = []
    for name, (args, step_env) in steps.items():
        result = manage(app, *args, env=step_env)
        if result.returncode != 0:
            failures.append(f"{name}: {result.stdout[-1500:]}{result.stderr[-1500:]}")
    return failures


def test_the_layout_copies_what_the_copy_lines_name(tmp_path: Path) -> None:
    app = lay_out("WORKDIR /app\nCOPY manage.py ./\nCOPY config ./config\n", tmp_path)
    assert (app / "manage.py").is_file()
    assert (app / "config" / "settings.py").is_file()
    assert not (app / "campaigns").exists()


def test_the_image_runs_with_debug_off_and_a_writable_media_volume() -> None:
    steps = instructions(DOCKERFILE.read_text())
    env = " ".join(rest for word, rest in steps if word == "ENV")
    assert "DEBUG=0" in env.split()
    assert any(word == "VOLUME" and "/app/media" in rest for word, rest in steps)
    user = next(i for i, (word, _) in enumerate(steps) if word == "USER")
    owner = steps[user][1]
    assert any(
        word == "RUN" and f"chown {owner}:{owner} /app/media" in rest for word, rest in steps[:user]
    ), "/app/media is created and owned by the image's user before USER"
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    for service in ("web", "worker"):
        assert "media:/app/media" in compose["services"][service]["volumes"], service
    assert "media" in compose["volumes"]


def test_the_files_the_dockerfile_copies_collect_static_pass_check_deploy_and_migrate(
    tmp_path: Path,
) -> None:
    failures = build_and_check(DOCKERFILE.read_text(), tmp_path)
    assert not failures, "\n\n".join(failures)


def compileall_arguments(dockerfile: str) -> list[list[str]]:
    """The arguments of each `python -m compileall …` a RUN step runs, in the image's paths."""
    found = []
    for word, rest in instructions(dockerfile):
        if word == "RUN":
            for command in re.split(r"&&|;", rest):
                args = shlex.split(command)
                if args[:3] == ["python", "-m", "compileall"]:
                    found.append(args[3:])
    return found


def stale_or_missing_bytecode(app: Path) -> list[str]:
    """The sources under `app` without a .pyc that Python would use, checked as importlib
    checks it (PEP 552): the interpreter's magic number, then the source's modification time
    and size, or its hash where the .pyc is hash-based (compileall's default under
    SOURCE_DATE_EPOCH, which reproducible builds set)."""
    missing = []
    for source in sorted(app.rglob("*.py")):
        cached = Path(importlib.util.cache_from_source(str(source)))
        header = cached.read_bytes()[:16] if cached.exists() else b""
        if len(header) < 16 or header[:4] != importlib.util.MAGIC_NUMBER:
            missing.append(str(source.relative_to(app)))
            continue
        (flags,) = struct.unpack("<I", header[4:8])
        if flags & 1:
            current = importlib.util.source_hash(source.read_bytes()) == header[8:16]
        else:
            stat = source.stat()
            stamp = (int(stat.st_mtime) & 0xFFFFFFFF, stat.st_size & 0xFFFFFFFF)
            current = struct.unpack("<II", header[8:16]) == stamp
        if not current:
            missing.append(str(source.relative_to(app)))
    return missing


def test_the_image_compiles_its_sources_so_its_processes_do_not(tmp_path: Path) -> None:
    """Every module the image copies has bytecode Python will use: the Dockerfile's own
    compileall, run here on the laid-out files (its paths moved under the layout, with the
    image's PYTHONDONTWRITEBYTECODE, which stops only the writing of caches at import)."""
    dockerfile = DOCKERFILE.read_text()
    workdir = next(rest for word, rest in instructions(dockerfile) if word == "WORKDIR")
    runs = compileall_arguments(dockerfile)
    assert any(workdir in args for args in runs), "no RUN step compiles the WORKDIR"
    image = tmp_path / "image"
    app = lay_out(dockerfile, image)
    assert stale_or_missing_bytecode(app), "the layout came with bytecode: nothing is checked"
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    for args in runs:
        moved = [str(image / a.lstrip("/")) if a.startswith("/") else a for a in args]
        subprocess.run([sys.executable, "-m", "compileall", *moved], env=env, check=True)
    assert stale_or_missing_bytecode(app) == []
    # And a source changed after the build is caught.
    settings_py = app / "config" / "settings.py"
    settings_py.write_text(settings_py.read_text() + "\n# changed\n")
    assert stale_or_missing_bytecode(app) == ["config/settings.py"]


def test_compileall_arguments_reads_the_run_steps() -> None:
    text = "WORKDIR /app\nRUN pip install . \\\n && python -m compileall -q -j 0 /app\n"
    assert compileall_arguments(text) == [["-q", "-j", "0", "/app"]]
    assert compileall_arguments("RUN python manage.py collectstatic\n") == []

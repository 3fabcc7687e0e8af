"""What the Makefile gives the processes it starts: the venv's interpreter (Debian's optimised
CPython 3.11 where it is installed with venv, else python3, or the one PYTHON names), and a
recipe environment without PYTHONDONTWRITEBYTECODE, so a run's processes reuse the project's
compiled modules instead of compiling them anew each."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DEBIAN_PYTHON = Path("/usr/bin/python3.11")

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def make(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """`make` on a copy of the Makefile in an empty directory (nothing of this checkout's
    .venv is seen), its output."""
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    (tmp_path / "pyproject.toml").touch()
    done = subprocess.run(
        ["make", "--no-print-directory", *args],
        cwd=tmp_path,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def debian_python_has_venv() -> bool:
    if not DEBIAN_PYTHON.exists():
        return False
    probe = [str(DEBIAN_PYTHON), "-c", "import ensurepip, venv"]
    return subprocess.run(probe, capture_output=True, check=False).returncode == 0


def test_the_venv_is_made_with_debians_python_where_it_has_venv_else_python3(
    tmp_path: Path,
) -> None:
    first = make(tmp_path, "-n", "install").splitlines()[0]
    expected = str(DEBIAN_PYTHON) if debian_python_has_venv() else "python3"
    assert first == f"{expected} -m venv .venv"


def test_python_on_the_command_line_names_the_interpreter(tmp_path: Path) -> None:
    first = make(tmp_path, "-n", "install", "PYTHON=python3.99").splitlines()[0]
    assert first == "python3.99 -m venv .venv"


def test_recipes_run_without_pythondontwritebytecode_whatever_the_shell_sets(
    tmp_path: Path,
) -> None:
    (tmp_path / "probe.mk").write_text('probe:\n\t@echo "[$${PYTHONDONTWRITEBYTECODE-unset}]"\n')
    out = make(
        tmp_path, "-f", "Makefile", "-f", "probe.mk", "probe", env={"PYTHONDONTWRITEBYTECODE": "1"}
    )
    assert out.strip() == "[unset]"

"""The installation's SECRET_KEY when the environment gives none: generated once into a file
(README, Production notes).

Every process of one installation (the dev server, a worker, `manage.py` commands) must sign
with the same key, so the first one to start writes it and the others read it. The file is
written whole before it appears under its name (a temporary file, then a hard link that fails if
another process got there first), so a reader never sees half a key; it is readable by its owner
only (0600).
"""

from __future__ import annotations

import os
import secrets
import tempfile
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured


def installation_secret_key(path: Path) -> str:
    """The key stored in `path`, generated there on first use."""
    existing = _read(path)
    if existing is not None:
        return existing
    key = secrets.token_urlsafe(50)  # 67 characters: `check --deploy` asks for 50 and variety
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".secret-key-")  # 0600
    except OSError as exc:
        raise ImproperlyConfigured(
            f"SECRET_KEY is not set and {path} cannot be written ({exc.strerror}): "
            "set SECRET_KEY, or SECRET_KEY_FILE to a writable path."
        ) from exc
    try:
        with os.fdopen(handle, "w") as out:
            out.write(key + "\n")
        try:
            os.link(temporary, path)
        except FileExistsError:
            # Another process of this installation wrote it first: use that one.
            return _read(path) or key
    finally:
        os.unlink(temporary)
    return key


def _read(path: Path) -> str | None:
    try:
        key = path.read_text().strip()
    except FileNotFoundError:
        return None
    if not key:
        raise ImproperlyConfigured(f"{path} is empty: delete it (a new key is made) or fill it.")
    return key

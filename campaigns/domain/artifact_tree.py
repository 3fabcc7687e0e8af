"""A run's artifacts as a tree of folders and files, and which of them the run page previews
(docs/domain.md §23.4). Pure: no Django, no I/O. Paths are relative to the run's artifact root,
parts separated by "/"; sizes in bytes."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final, Literal

Preview = Literal["text", "json", "image"]

# Images a browser shows inline safely; an SVG can carry script, so it is only downloaded.
IMAGE_TYPES: Final = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}
TEXT_SUFFIXES: Final = frozenset(
    {".txt", ".log", ".md", ".csv", ".tsv", ".yaml", ".yml", ".py", ".cfg", ".ini", ".toml"}
)
JSON_SUFFIXES: Final = frozenset({".json", ".jsonl"})
# A preview shows at most this much of a file; a JSON file is laid out only up to PARSE_BYTES.
PREVIEW_BYTES: Final = 64 * 1024
PARSE_BYTES: Final = 1024 * 1024


@dataclass(frozen=True)
class File:
    id: int
    path: str
    size_bytes: int
    sha256: str


@dataclass
class Folder:
    name: str
    path: str
    folders: dict[str, Folder] = field(default_factory=dict)
    files: list[File] = field(default_factory=list)

    @property
    def size_bytes(self) -> int:
        return sum(f.size_bytes for f in self.files) + sum(
            d.size_bytes for d in self.folders.values()
        )

    @property
    def children(self) -> list[Folder]:
        return [self.folders[k] for k in sorted(self.folders)]


def tree(files: Iterable[File]) -> Folder:
    """The root folder holding every file under its folders, folders and files by name."""
    root = Folder("", "")
    for file in files:
        *parents, _name = file.path.split("/")
        here = root
        for part in parents:
            if part not in here.folders:
                here.folders[part] = Folder(part, f"{here.path}{part}/")
            here = here.folders[part]
        here.files.append(file)
    _sort(root)
    return root


def _sort(folder: Folder) -> None:
    folder.files.sort(key=lambda f: f.path)
    for child in folder.folders.values():
        _sort(child)


def _suffix(path: str) -> str:
    name = path.rsplit("/", 1)[-1].lower()
    return name[name.rfind(".") :] if "." in name else ""


def preview_of(path: str) -> Preview | None:
    """How the run page previews a file, by its name; None: download only."""
    suffix = _suffix(path)
    if suffix in IMAGE_TYPES:
        return "image"
    if suffix in JSON_SUFFIXES:
        return "json"
    if suffix in TEXT_SUFFIXES or suffix == "" or path.rsplit("/", 1)[-1] == "MLmodel":
        return "text"
    return None


def image_type(path: str) -> str | None:
    return IMAGE_TYPES.get(_suffix(path))


def size_in_words(size: int) -> str:
    """Bytes as people read them: 999 B, 1.5 kB, 20.5 MB (powers of 1000)."""
    value = float(size)
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if value < 1000 or unit == "TB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{size} B"

"""GPU model names as people type them: the one normaliser every layer compares names with.

"NVIDIA RTX-4090", "rtx 4090" and "RTX_4090" are the same card, and so are "AMD MI300X" and
"MI300X": case, spaces, hyphens and underscores are ignored, and so is a leading vendor name
(NVIDIA, AMD, Google), which the catalog's names leave out. Pure: no Django, no I/O.
"""

from __future__ import annotations

from typing import Final

VENDOR_PREFIXES: Final = ("nvidia", "amd", "google")


def normalize_gpu(name: str) -> str:
    """A comparable key for a GPU model name ("" for a blank one)."""
    folded = "".join(ch for ch in name.casefold() if ch not in " -_\t")
    for prefix in VENDOR_PREFIXES:
        if folded.startswith(prefix):
            return folded[len(prefix) :]
    return folded

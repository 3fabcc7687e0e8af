"""Every path and section the docs cite exists (issue 35 item 6: docs/architecture.md cited a
module that was never there, and moving a page's sections must not leave a citation behind).

- **Paths** in docs/*.md, README.md and bench/README.md: a backticked token that names a file
  or folder of the repository (it has a `/` and starts with one of the repository's top-level
  folders, or ends like a file: `.py`, `.md`, `.html`, …), a path written bare that starts with a
  top-level folder, and a link to a local file (its `#anchor` a heading of that page). A
  placeholder (`<app>/api/urls.py`), a glob, a URL or a file a run writes under `build/` is not
  a path of the repository. `module.py`'s attribute (`…/metric_packing.pack_points`) counts as
  the module.
- **Sections**, in every text file of the repository: a page followed by a section number
  (`docs/metric_store.md §3`, `architecture.md §2`, `docs/domain.md §7.7, §7.8`) has those
  sections (`## N. Title` headings, `N.M` paragraphs); a page followed by a quoted title
  (`bench/README.md "Scale"`, `docs/metric_store.md §5, "Ingest cost"`, `README "Tests"`) has a
  heading or a bold label starting with it, inside the numbered section when one is given.
  Inside docs/x.md a bare `§N` is x.md's own section (docs/domain.md's bare ones, cited
  everywhere, are checked by tests/test_architecture.py).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SELF = Path(__file__).resolve()
DOMAIN = ROOT / "docs" / "domain.md"
NOT_OURS = {
    ".git",
    ".venv",
    "build",
    # `make client-wheel` (and the client package's test) writes the wheel here.
    "dist",
    "staticfiles",
    "media",
    "node_modules",
    "__pycache__",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
}
CITING_SUFFIXES = {".py", ".md", ".html", ".txt", ".toml", ".yml", ".yaml", ".cfg", ".sh", ".sql"}


def documentation() -> list[Path]:
    """The pages whose paths are checked."""
    return [ROOT / "README.md", ROOT / "bench" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def our_text_files() -> Iterator[Path]:
    for directory, subdirectories, names in os.walk(ROOT):
        subdirectories[:] = [
            d
            for d in subdirectories
            if d not in NOT_OURS and not d.endswith(".egg-info") and not d.startswith(".venv")
        ]
        for name in names:
            path = Path(directory) / name
            if (path.suffix in CITING_SUFFIXES or name == "Makefile") and path != SELF:
                yield path


@functools.cache
def top_level_folders() -> tuple[str, ...]:
    return tuple(
        sorted(
            p.name
            for p in ROOT.iterdir()
            if p.is_dir()
            and not p.name.startswith(".")
            and p.name not in NOT_OURS
            and not p.name.endswith(".egg-info")
        )
    )


def flattened(text: str) -> str:
    """The text with each line break, the next line's indent and a comment's `#` as spaces, so
    a citation wrapped over two lines (of prose, a docstring or a comment) reads as one; every
    offset is kept, so a match's line is its line in the file."""
    return re.sub(r"\n[ \t]*(?:#+[ \t]?)?", lambda m: " " * len(m.group()), text)


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


# --- Paths -------------------------------------------------------------------------------------

BACKTICKED = re.compile(r"`([^`\s]+)`")
# Placeholders, globs, URLs and options, code, or a file a run writes (build/, and dist/ where
# `make client-wheel` puts the client's wheel, are not kept).
NOT_A_PATH = re.compile(r"[<>{}*…:=@$?|'\"()\[\],]|^[/.~-]|^(build|dist)/")
FILE_SUFFIX = re.compile(r"\.(?:py|md|html|txt|toml|ya?ml|json|sh|cfg|sql|svg|css|js)$")
MARKDOWN_LINK = re.compile(r"\]\(([^)\s]+)\)")


def bare_path() -> re.Pattern[str]:
    folders = "|".join(map(re.escape, top_level_folders()))
    return re.compile(rf"(?<![\w/.`-])((?:{folders})/[\w./-]*[\w/])")


def in_repository(path: str) -> bool:
    """`path` (from the repository's root) exists, or is an attribute of a module that does."""
    if (ROOT / path).exists():
        return True
    module = re.fullmatch(r"(.+/\w+)\.[\w.]+", path)
    return bool(module) and (ROOT / f"{module.group(1)}.py").is_file()


def is_repository_path(token: str) -> bool:
    if "/" not in token or NOT_A_PATH.search(token):
        return False
    return token.split("/")[0] in top_level_folders() or bool(FILE_SUFFIX.search(token))


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    return {github_anchor(h) for h in headings(page.read_text())}


def missing_paths(text: str, page: Path) -> list[str]:
    """The paths `text` (the contents of `page`) names that the repository does not hold."""
    found = []
    for match in BACKTICKED.finditer(text):
        token = match.group(1).split("::")[0]
        if is_repository_path(token) and not in_repository(token):
            found.append(f"line {line_of(text, match.start())}: `{token}`")
    outside_code = BACKTICKED.sub(lambda m: " " * len(m.group()), text)
    for match in bare_path().finditer(outside_code):
        if not in_repository(match.group(1)):
            found.append(f"line {line_of(text, match.start())}: {match.group(1)}")
    for match in MARKDOWN_LINK.finditer(text):
        target, _, anchor = match.group(1).partition("#")
        if re.match(r"[a-z]+:", target) or not target:
            continue  # a URL, a mail address, or an anchor of this page
        linked = (page.parent / target).resolve()
        if not linked.exists():
            found.append(f"line {line_of(text, match.start())}: link to {match.group(1)}")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            found.append(f"line {line_of(text, match.start())}: no heading #{anchor}")
    return found


# --- Sections ----------------------------------------------------------------------------------

PAGE = r"(?<![\w/.-])(?P<page>(?:[\w-]+/)*[\w-]+\.md|README(?![\w.-]))"
NUMBER = re.compile(r"§ ?(\d+(?:\.\d+)*)")
CITATION = re.compile(
    PAGE
    + r"(?P<sections>(?:\s*[,–-]?\s*(?:and\s+)?§ ?\d+(?:\.\d+)*)*)"
    + r"(?:(?:\s+|\s*,\s*)\"(?P<title>[A-Z0-9][^\"]{0,119})\")?"
)


def headings(text: str) -> list[str]:
    return re.findall(r"^#+ +(.+?) *$", text, re.M)


@functools.cache
def sections_of(text: str) -> tuple[set[str], set[str]]:
    """(sections, subsections): `## N. Title` headings, and `N.M` paragraphs or headings."""
    sections = set(re.findall(r"^## (\d+)\. ", text, re.M))
    subsections = set(re.findall(r"^(?:#+ )?(\d+\.\d+)[ .]", text, re.M))
    return sections, subsections


@functools.cache
def section_text(text: str, number: str) -> str:
    """Section `number`'s text: from its `## N.` heading to the next `## ` heading."""
    found = re.search(rf"^## {re.escape(number)}\. .*?(?=^## |\Z)", text, re.M | re.S)
    return found.group() if found else ""


@functools.cache
def labels(text: str) -> tuple[str, ...]:
    """The headings of `text` (their numbers dropped) and its bold labels, in lower case."""
    found = [re.sub(r"^\d+(?:\.\d+)*\.? +", "", h) for h in headings(text)]
    found += re.findall(r"\*\*([^*]+)\*\*", text)
    return tuple(" ".join(label.split()).lower() for label in found)


def has_title(text: str, title: str) -> bool:
    """A heading or a bold label of `text` starts with `title`."""
    wanted = " ".join(title.split()).lower()
    return any(label.startswith(wanted) for label in labels(text))


@functools.cache
def read(page: Path) -> str:
    return page.read_text()


def cited_page(name: str, citing: Path) -> Path | None:
    """The page a citation names: from the repository's root when it has a folder, else beside
    the citing file, in docs/ or at the root; `README` is the root's README.md."""
    if name == "README":
        return ROOT / "README.md"
    places = [ROOT / name] if "/" in name else [citing.parent / name, ROOT / "docs" / name]
    places += [] if "/" in name else [ROOT / name]
    return next((p for p in places if p.is_file()), None)


# A page cited right after another project's name is that project's: `owner/repo docs/x.md`, or
# one of these names before it ("torchtune README").
OTHER_PROJECTS = {"torchtune"}


def of_another_project(flat: str, start: int) -> bool:
    before = re.search(r"(\S+) $", flat[max(0, start - 80) : start])
    word = before.group(1) if before else ""
    return word in OTHER_PROJECTS or bool(re.fullmatch(r"[\w-]+/[\w.-]+", word))


def citations(flat: str) -> Iterator[re.Match[str]]:
    """Each citation of a section or a heading in `flat` (a page merely named, or another
    project's page, left out)."""
    for match in CITATION.finditer(flat):
        cites_a_part = NUMBER.search(match.group("sections")) or match.group("title")
        if cites_a_part and not of_another_project(flat, match.start()):
            yield match


def wrong_citations(text: str, citing: Path) -> list[str]:
    """The sections and titles `text` (the contents of `citing`) cites that are not there."""
    if ".md" not in text and "README" not in text and "§" not in text:
        return []
    flat = flattened(text)
    wrong = []
    qualified: set[int] = set()
    for match in citations(flat):
        where = f"line {line_of(text, match.start())}: {' '.join(match.group().split())}"
        page = cited_page(match.group("page"), citing)
        if page is None:
            wrong.append(f"{where} (no such page)")
            continue
        qualified |= {m.start() for m in NUMBER.finditer(flat, match.start(), match.end())}
        wrong += [f"{where} {problem}" for problem in problems(read(page), match)]
    if citing.parent == ROOT / "docs" and citing != DOMAIN:
        for number in NUMBER.finditer(flat):
            if number.start() not in qualified and not has_section(text, number.group(1)):
                wrong.append(f"line {line_of(text, number.start())}: {number.group()} of this page")
    return wrong


def problems(page: str, citation: re.Match[str]) -> list[str]:
    """What `citation` names that `page` (its text) lacks."""
    numbers = NUMBER.findall(citation.group("sections"))
    title = citation.group("title")
    found = [f"(no §{n})" for n in numbers if not has_section(page, n)]
    within = section_text(page, numbers[0].split(".")[0]) if numbers else page
    if title and not has_title(within, title):
        found.append(f'(no heading "{title}" there)')
    return found


def has_section(text: str, number: str) -> bool:
    sections, subsections = sections_of(text)
    return number in (subsections if "." in number else sections)


# --- The readers, on made-up text --------------------------------------------------------------

ARCHITECTURE = ROOT / "docs" / "architecture.md"


@pytest.mark.parametrize(
    ("text", "missing"),
    [
        ("`campaigns/domain/timeline.py`", False),
        ("`campaigns/domain/no_such_rule.py`", True),
        ("`ledger/charts/value_chart.py`", True),  # the one issue 35 found
        ("`estimates/domain/formulas/`", False),
        ("`estimates/domain/formulas.py`", True),  # a package now
        ("`tests/test_docs_links.py::test_x`", False),
        ("`no_such_folder/rules.py`", True),
        ("`campaigns/services/metric_packing.pack_points`", False),
        ("`<app>/api/urls.py`, `bench/<name>/run.py`, `build/bench.json`", False),
        ("`GET /runs/{id}/metrics/`, `runs/get`, `models:/m-…`", False),
        ("thinned by campaigns/domain/downsampling.py.", False),
        ("thinned by campaigns/domain/upsampling.py.", True),
        ("[the rules](domain.md)", False),
        ("[the rules](rules.md)", True),
        ("[the scale](../bench/README.md#scale-the-metric-store-issue-21)", False),
        ("[the scale](../bench/README.md#no-such-heading)", True),
        ("[MLflow](https://mlflow.org/docs/)", False),
    ],
)
def test_the_path_reader_finds_what_is_not_there(text: str, missing: bool) -> None:
    assert bool(missing_paths(text, ARCHITECTURE)) is missing


@pytest.mark.parametrize(
    ("text", "wrong"),
    [
        ('docs/metric_store.md §3 "Two tiers"', False),
        ('(docs/metric_store.md §5, "Ingest\n    # cost"): the', False),
        ("docs/metric_store.md §9", True),
        ('docs/metric_store.md §2 "Two tiers"', True),  # the title is §3's
        ("docs/architecture.md §7", True),  # moved to docs/metric_store.md
        ("docs/architecture.md §2", False),
        ("docs/domain.md §7.7, §7.8", False),
        ("docs/domain.md §8.5–§8.6", False),
        ("docs/domain.md §" + "7.77", True),  # split: tests/test_architecture.py reads this
        ('bench/README.md "Posting the page"', False),
        ('bench/README.md "Posting the letter"', True),
        ('docs/testing.md §7, "Where the suite\'s time goes"', False),
        ('README "Tests"', False),
        ("docs/nowhere.md §1", True),
        ('knjcode/mxnet-finetuner docs/benchmark.md, "Memory usage (MiB)"', False),
        ('torchtune README, "Memory and training speed"', False),
        ('render_to_string("ledger/closing_report.md", {"r": data})', False),
        ("## 3. Lots\n\nthe lot advice (§3)", False),  # in docs/x.md, x.md's own section
        ("## 3. Lots\n\nthe lot advice (§9)", True),
    ],
)
def test_the_citation_reader_finds_what_is_not_there(text: str, wrong: bool) -> None:
    assert bool(wrong_citations(text, ARCHITECTURE)) is wrong


# --- The repository ----------------------------------------------------------------------------


def test_every_path_the_docs_name_exists() -> None:
    pages = documentation()
    assert {ROOT / "docs" / "architecture.md", ROOT / "docs" / "metric_store.md"} <= set(pages)
    missing = {
        str(page.relative_to(ROOT)): found
        for page in pages
        if (found := missing_paths(page.read_text(), page))
    }
    assert not missing, "paths the docs name that do not exist:\n" + "\n".join(
        f"{page} {where}" for page, found in sorted(missing.items()) for where in found
    )


def test_every_cited_section_and_heading_exists() -> None:
    files = sorted(our_text_files())
    assert ROOT / "campaigns" / "services" / "metric_packing.py" in files
    cited = sum(len(list(citations(flattened(page.read_text())))) for page in documentation())
    assert cited > 50  # the reader works: the docs alone cite ~100 sections and headings
    wrong = {
        str(path.relative_to(ROOT)): found
        for path in files
        if (found := wrong_citations(path.read_text(errors="replace"), path))
    }
    assert not wrong, "citations of sections or headings that do not exist:\n" + "\n".join(
        f"{path} {where}" for path, found in sorted(wrong.items()) for where in found
    )

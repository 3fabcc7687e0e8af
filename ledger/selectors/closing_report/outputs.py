"""The closing report's outputs: the deliverables submitted (files, checks, acceptance), the
checkpoints and the resume point chosen by ledger/domain/resume_point.py, and the steps to reload
what the campaign produced."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from campaigns.domain.item_fate import ItemFate
from campaigns.models import Campaign, PlannedItem, RunStatus
from ledger.domain.resume_point import CheckpointFacts, ResumeChoice, choose_resume_point
from ledger.models import Deliverable
from ledger.selectors.closing_report.common import moment
from ledger.selectors.closing_report.items import run_counts


def deliverables_section(deliverables: list[Deliverable]) -> dict[str, Any]:
    rows: list[dict[str, Any]] = [
        {
            "id": d.pk,
            "kind": d.kind,
            "corpus": {"name": d.corpus_name, "revision": d.corpus_revision},
            "run": d.run.run_id if d.run else None,
            "files": [
                {"path": f.path, "size_bytes": f.size_bytes, "sha256": f.sha256}
                for f in d.files.all()
            ],
            "expected_ids_ok": d.expected_ids_ok,
            "reload_verified": d.reload_verified,
            "base_revision": d.base_revision or None,
            "accepted": d.accepted,
            "rejection_reasons": list(d.rejection_reasons or []),
            "submitted_at": moment(d.created_at),
        }
        for d in deliverables
    ]
    return {
        "items": rows,
        "submitted": len(rows),
        "accepted": sum(1 for r in rows if r["accepted"]),
        "distinct_accepted_corpora": len(
            {(r["corpus"]["name"], r["corpus"]["revision"]) for r in rows if r["accepted"]}
        ),
    }


def _usable_checkpoints(
    verified: Sequence[Mapping[str, Any]], choice: ResumeChoice
) -> list[Mapping[str, Any]]:
    """The verified checkpoints at the chosen resume point's run and step; none without one."""
    if not choice.checkpoint:
        return []
    run_id, step = choice.checkpoint.run_id, choice.checkpoint.step
    return [c for c in verified if c["run__run_id"] == run_id and c["step"] == step]


def _checkpoint_row(c: Mapping[str, Any], required: list[str]) -> dict[str, Any]:
    """One checkpoint as the report shows it, with the required components it lacks."""
    return {
        "run": c["run__run_id"],
        "step": c["step"],
        "components": c["components"],
        "missing": sorted(set(required) - set(c["components"] or [])),
        "location": c["location"],
        "size_bytes": c["size_bytes"],
        "write_seconds": c["write_seconds"],
        "restore_seconds": c["restore_seconds"],
        "at": moment(c["created_at"]),
    }


def _resume_items(
    items: list[PlannedItem], run_groups: list[dict[str, Any]], fates: Mapping[int, ItemFate]
) -> list[dict[str, Any]]:
    """The plan's resume checks, each with its fate and its runs (zero when it never ran)."""
    counts = run_counts(run_groups)
    return [
        {
            "name": i.name,
            # Its fate (docs/domain.md §5.5), as the items' table says it.
            "status": fates[i.pk].fate,
            "runs": counts[i.pk]["total"] if i.pk in counts else 0,
            "completed": counts[i.pk][RunStatus.COMPLETED] if i.pk in counts else 0,
        }
        for i in items
        if i.role == "resume_check"
    ]


def _resume_statement(usable: list[Mapping[str, Any]], choice: ResumeChoice) -> str:
    """The verified resume in words, or every reason the rule found none."""
    if not usable:
        return "No valid resume point: " + "; ".join(choice.why_not) + "."
    best = usable[0]
    return (
        f"A resume was verified in a new process: run {best['run__run_id']} at step "
        f"{best['step']} holds {', '.join(best['components'])}."
    )


def checkpoints_section(
    campaign: Campaign,
    items: list[PlannedItem],
    run_groups: list[dict[str, Any]],
    totals: dict[str, Any],
    verified: Sequence[Mapping[str, Any]],
    fates: Mapping[int, ItemFate],
) -> dict[str, Any]:
    """The report's checkpoints: the totals, the best checkpoint (the chosen resume point's,
    else the newest verified one) and whether a resume was verified, with the resume checks."""
    required = list(campaign.required_checkpoint_components or [])
    choice = _resume_choice(campaign, verified)
    usable = _usable_checkpoints(verified, choice)
    best = usable[0] if usable else (verified[0] if verified else None)
    mean_write = totals["mean_write"]
    return {
        "required_components": required,
        "total": totals["total"],
        "verified": totals["verified"],
        "runs_with_checkpoints": totals["runs"],
        "mean_write_seconds": None if mean_write is None else round(mean_write, 1),
        "max_restore_seconds": totals["max_restore"],
        "usable_resume": bool(usable),
        "best": _checkpoint_row(best, required) if best else None,
        "resume_items": _resume_items(items, run_groups, fates),
        "statement": _resume_statement(usable, choice),
    }


def _resume_choice(campaign: Campaign, verified: Sequence[Mapping[str, Any]]) -> ResumeChoice:
    """The resume point by the rule of ledger/domain/resume_point.py (verified checkpoints, newest
    first)."""
    return choose_resume_point(
        [
            CheckpointFacts(
                run_id=c["run__run_id"],
                run_status=c["run__status"],
                step=c["step"],
                components=tuple(c["components"] or ()),
                location=c["location"] or "",
                verified=True,
                restore_seconds=c["restore_seconds"],
            )
            for c in verified
        ],
        frozenset(campaign.required_checkpoint_components or ()),
    )


def reload_instructions(
    campaign: Campaign, deliverables: list[Deliverable], verified: Sequence[Mapping[str, Any]]
) -> list[str]:
    steps = [
        f"Fixed corpus: {campaign.corpus_name} at revision {campaign.corpus_revision}; "
        "use exactly this revision to compare with these results."
    ]
    for d in deliverables:
        if not d.accepted:
            continue
        files = list(d.files.all())
        listing = ", ".join(f"{f.path} (sha256 {f.sha256[:12]}…, {f.size_bytes} B)" for f in files)
        origin = f" from run {d.run.run_id}" if d.run else ""
        step = (
            f"{d.get_kind_display()} for {d.corpus_name}@{d.corpus_revision}{origin}: fetch "
            f"{listing} and check each sha256 before use."
        )
        if d.kind == "adapter":
            step += f" Load the base model at revision {d.base_revision}, then apply the adapter."
        steps.append(step)
    choice = _resume_choice(campaign, verified)
    c = choice.checkpoint
    if c is not None:
        steps.append(
            f"Resume from {c.location} (run {c.run_id}, step {c.step}): it holds "
            f"{', '.join(c.components)}"
            + (
                f" and was restored in {c.restore_seconds:.0f} s in a new process."
                if c.restore_seconds is not None
                else " and was restored in a new process."
            )
        )
    else:
        steps.append(
            "There is no valid resume point: "
            + "; ".join(choice.why_not)
            + ". Plan a resume check before relying on a restart."
        )
    return steps

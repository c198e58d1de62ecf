"""Light helpers for the verl tests (imported inside Ray workers too: no torch, no verl)."""

from __future__ import annotations

from rods.tasks import Message, Provenance, Task


def make_variant(seed: Task, n: int, narrative: str = "") -> Task:
    """A synthetic variant of `seed` with new wording (so a new fingerprint) and the same calls."""
    question = [
        [
            Message(role=m.role, content=f"{m.content} (variant {n}{': ' + narrative if narrative else ''})")
            for m in turn
        ]
        for turn in seed.question
    ]
    return seed.model_copy(
        update={
            "id": f"{seed.id}__v{n}",
            "question": question,
            "provenance": Provenance(origin="synthetic", parent_id=seed.id, generation=1, narrative=narrative or None),
        }
    )


def narrative_variants(backend, **_):
    """A stand-in synthesis pipeline: one endpoint call per seed for a narrative, one variant per seed."""

    def synthesize(seeds: list[Task]) -> list[Task]:
        out = []
        for seed in seeds:
            reply = backend.chat(
                [{"role": "user", "content": f"Write a one-line narrative for a variant of task {seed.id}."}],
                purpose="plan.narrative",
                context={"seed_id": seed.id},
            )
            out.append(make_variant(seed, 1, reply.text.strip()))
        return out

    return synthesize

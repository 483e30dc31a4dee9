"""What a profile shrinks, in words: every reduced-scale page prints this."""

from __future__ import annotations

from dataclasses import fields

from ..profiles import Profile, cuda_hint, get_profile

__all__ = ["scale_note"]


def scale_note(section: str, profile: str | Profile) -> str:
    """A line per setting of ``section`` (a Profile field, e.g. ``"sample_efficiency"``) that
    differs from the paper profile: ``name: ours (paper: theirs)``."""
    P, paper = get_profile(profile), get_profile("paper")
    ours, theirs = getattr(P, section), getattr(paper, section)
    lines = []
    for f in fields(ours):
        a, b = getattr(ours, f.name), getattr(theirs, f.name)
        if a != b:
            lines.append(f"  {f.name}: {a} (paper: {b})")
    head = f"profile {P.name!r}: " + ("the paper's exact settings" if not lines else "reduced scale; differs from the paper in")
    return "\n".join([head, *lines] + ([cuda_hint(P)] if cuda_hint(P) else []))

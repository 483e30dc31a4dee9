"""The sensitivity study's settings (Section 3.1, A.1): its base, the book's Figure 1 reading at
width 512 under the study's protocol (:data:`STUDY_BASE`), every setting around it, one factor at a
time (:data:`SETTINGS`), and its seeds (:data:`STUDY_SEEDS`)."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from ....checks import check_choice
from .base import GATED_RATE_FACTORS, READOUT_INITS, Reading

__all__ = ["STUDY_SEEDS", "STUDY_BASE", "setting", "SETTINGS"]

STUDY_SEEDS = (0, 1)

#: The study's base: the book's Figure 1 reading (:data:`~.base.FIGURE1_READING`) at width 512,
#: batch 256, 6 000 updates of every network, an evaluation every 250, under the study's protocol.
STUDY_BASE = Reading("base (balanced, x0.1)", readout_lr=1.0, width=512, batch=256, max_steps_relu=6_000, max_steps_other=6_000,
                     eval_every=250, gated_rate_factors=GATED_RATE_FACTORS, data_per_seed=True)


def _setting(label: str, *, readout: str | None = None, steps: int | None = None, **changes: Any) -> Reading:
    """:data:`STUDY_BASE` named ``label`` with the readout's initial value ``readout`` (a name of
    :data:`~.base.READOUT_INITS`), ``steps`` updates of every network and ``changes``."""
    if readout is not None:
        changes["init"] = READOUT_INITS[check_choice(readout, "readout_init", tuple(READOUT_INITS))]
    if steps is not None:
        changes |= {"max_steps_relu": steps, "max_steps_other": steps}
    return replace(STUDY_BASE, name=label, **changes)


def setting(fields: dict[str, Any], name: str = "") -> Reading:
    """The study reading of a study's ``settings`` entry (:meth:`~.base.Reading.setting_fields`),
    named ``name``."""
    fields = dict(fields)
    return _setting(name or STUDY_BASE.name, readout=fields.pop("readout_init"), steps=fields.pop("steps"), **fields)


_m, _d = STUDY_BASE.width, 40
#: The study's settings by label: the base (the book's Figure 1 reading at width 512) and one
#: factor at a time around it, plus the probe's all-small reading and the standard / NTK / muP
#: parameterizations at full scale.
SETTINGS: dict[str, Reading] = {s.name: s for s in (
    STUDY_BASE,
    # initialization scale (balanced readout)
    _setting("balanced x1", hidden_scale=1.0),
    _setting("balanced x0.3", hidden_scale=0.3),
    _setting("balanced x0.03", hidden_scale=0.03),
    _setting("balanced x0.01", hidden_scale=0.01),
    # the readout's initial value
    _setting("zero readout x0.1", readout="zero"),
    _setting("standard readout x0.1", readout="standard"),
    _setting("zero readout x1", readout="zero", hidden_scale=1.0),
    _setting("zero readout x0.01", readout="zero", hidden_scale=0.01),
    _setting("standard x0.01", readout="standard", hidden_scale=0.01),
    _setting("standard x0.03", readout="standard", hidden_scale=0.03),
    # parameterizations (Adam: the readout's initial value and relative rate)
    _setting("standard (PyTorch)", readout="standard", hidden_scale=1.0),
    _setting("NTK", readout="standard", hidden_scale=1.0, readout_lr=round(math.sqrt(_d / _m), 4)),
    _setting("muP / mean-field (base 2 048)", readout="zero", hidden_scale=1.0, readout_lr=2048 / _m),
    _setting("readout rate x0.1", readout_lr=0.1),
    _setting("readout rate x0.28", readout_lr=round(math.sqrt(_d / _m), 4)),
    _setting("readout rate x4", readout_lr=4.0),
    # the gated value branch smaller than the gate
    _setting("value x0.3", value_scale=0.3),
    _setting("value x0.1", value_scale=0.1),
    # the cosine horizon and the training length
    _setting("horizon x2", horizon=2.0),
    _setting("horizon x10", horizon=10.0),
    _setting("steps 2 000", steps=2_000),
    _setting("steps 12 000", steps=12_000),
    _setting("NTK x0.1", readout="standard", readout_lr=round(math.sqrt(_d / _m), 4)),
)}

"""The neurons a paper-scale run of the readings kept, drawn as page 03 draws them: Figure 1
(bottom) and Figure 5 at its scale (:func:`drawn_neuron_figures`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from .base import neuron_panels

if TYPE_CHECKING:
    from matplotlib.figure import Figure as PlotFigure

__all__ = ["drawn_neuron_figures"]


def drawn_neuron_figures(recorded: dict) -> list[PlotFigure]:
    """The neurons a recorded run drew (:func:`figure_neurons`): Figure 1 (bottom) and Figure 5 at
    its scale, one figure each where some neuron qualified."""
    drawn = next(iter(recorded["readings"].values()))["neurons"]
    out = []
    for part, title in (("figure1", "GELU neurons with $A_j \\geq 0.90$ (paper scale)"),
                        ("figure5", "moderate $A_j$, dominant coordinate (paper scale)")):
        if drawn[part]:
            W = torch.tensor([n["w"] for n in drawn[part]])
            out.append(neuron_panels(W, [f"{n['activation']} {n['neuron']}" for n in drawn[part]], title))
    return out

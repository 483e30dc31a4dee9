"""Training as in Appendices A.1 and A.2 (:mod:`.loop`), and the Section 3.1 runs (:mod:`.figure1`)."""

from .figure1 import FIGURE1_SAMPLE_SEEDS, Figure1Run, figure1_data, paper_profile_estimate, relative_movement, train_figure1
from .loop import (
    LR_A1,
    LR_A1_RELU_GRID,
    LR_A2,
    TrainConfig,
    TrainData,
    TrainResult,
    a1_config,
    a2_config,
    cosine_lr,
    mse,
    plateau_step,
    replay_stopping,
    train,
)

__all__ = [
    "LR_A1",
    "LR_A1_RELU_GRID",
    "LR_A2",
    "TrainConfig",
    "TrainData",
    "TrainResult",
    "a1_config",
    "a2_config",
    "cosine_lr",
    "mse",
    "plateau_step",
    "replay_stopping",
    "train",
    "FIGURE1_SAMPLE_SEEDS",
    "Figure1Run",
    "figure1_data",
    "train_figure1",
    "relative_movement",
    "paper_profile_estimate",
]

"""Training as in Appendices A.1 and A.2 (:mod:`.loop`, with the hand-derived gradient of
:mod:`.step`). The Section 3.1 runs that use it are an experiment:
:func:`monosem.experiments.questions.figure1.base.train_figure1`."""

from .loop import (
    A2_FINAL_LR_RATIO,
    A2_MIN_REL_IMPROVEMENT,
    LR_A1,
    LR_A1_RELU_GRID,
    A1_RELU_BEST_STEP,
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
    step_memory_bytes,
    train,
)
from .step import STEP_REVISION, STEP_REVISIONS

__all__ = [
    "A2_FINAL_LR_RATIO",
    "A2_MIN_REL_IMPROVEMENT",
    "LR_A1",
    "LR_A1_RELU_GRID",
    "A1_RELU_BEST_STEP",
    "LR_A2",
    "STEP_REVISION",
    "STEP_REVISIONS",
    "TrainConfig",
    "TrainData",
    "TrainResult",
    "a1_config",
    "a2_config",
    "cosine_lr",
    "mse",
    "plateau_step",
    "replay_stopping",
    "step_memory_bytes",
    "train",
]

"""Every figure of Section 3 as a declared sweep: the grid K x n x run x method at a profile.

``sweep("fig2", "cpu")`` lists the jobs of Figure 2 at the cpu profile. The MLP and kernel cells of
Figures 2, 4 and 6 with the same settings are the same jobs (one cache entry), so a trained MLP
is shared between the figures.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..profiles import Profile, get_profile
from .cache import Job

__all__ = ["FIGURES", "MLP_SCHEDULES", "Figure", "sweep", "method_params"]

#: Appendix A.2: Adam learning-rate schedules (cosine decay from the first to the second value).
MLP_SCHEDULES = {
    "relu": (1e-2, 1e-4),
    "gelu": (3e-2, 3e-4),
    "reglu": (3e-3, 3e-5),
    "swiglu": (1e-2, 1e-4),
}
#: Appendix A.2: stop at the label-noise variance.
TARGET_TRAIN_MSE = 4e-4
#: Appendix A.2: plateau rule, relative training-MSE improvement.
PLATEAU_REL_IMPROVEMENT = 5e-4


@dataclass(frozen=True)
class Figure:
    """A figure's methods and where its grid comes from in a :class:`~monosem.profiles.Profile`."""

    name: str
    title: str
    methods: tuple[str, ...]
    sizes: str  # the Profile field holding Ks / ns / runs / n_test


FIGURES: dict[str, Figure] = {
    "fig2": Figure("fig2", "Figure 2: sample efficiency as K grows (Section 3.2)",
                   ("mlp-relu", "mlp-reglu", "laplace", "rfm", "oracle-laplace", "oracle-rfm", "bayes"), "sample_efficiency"),
    "fig6": Figure("fig6", "Figure 6: all four activations (Appendix A.2)",
                   ("mlp-relu", "mlp-gelu", "mlp-reglu", "mlp-swiglu", "bayes"), "sample_efficiency"),
    "fig4": Figure("fig4", "Figure 4: MLP-gated local predictors (Section 3.3)",
                   ("mlp-relu", "laplace", "rfm", "gated-laplace", "gated-rfm", "oracle-laplace", "oracle-rfm"), "gates"),
}


def _check_figure(figure: str) -> Figure:
    if figure not in FIGURES:
        raise ValueError(f"figure={figure!r} is not a known figure; use one of {sorted(FIGURES)}")
    return FIGURES[figure]


def method_params(method: str, P: Profile) -> dict:
    """Every setting a method's result depends on, at profile ``P`` (part of the cache key)."""
    se = P.sample_efficiency
    common = {"n_test": se.n_test}
    if method.startswith("mlp-"):
        act = method[4:]
        lr0, lr1 = MLP_SCHEDULES[act]
        return common | {
            "activation": act, "width": se.width, "batch": se.batch, "lr": lr0, "lr_final": lr1,
            "min_steps": se.min_steps, "max_steps": se.max_steps, "eval_every": se.eval_every,
            "patience_evals": se.patience_evals, "target_mse": TARGET_TRAIN_MSE,
            "rel_improvement": PLATEAU_REL_IMPROVEMENT,
        }
    kernel = {"ridge": 1e-6, "exact_max_n": se.exact_max_n, "target_mse": TARGET_TRAIN_MSE, "agop_samples": se.agop_samples}
    if method in ("laplace", "rfm"):
        return common | kernel | {"bandwidth": "cluster-median"}
    if method in ("oracle-laplace", "oracle-rfm"):
        return common | kernel | {"bandwidth": "median"}
    if method in ("gated-laplace", "gated-rfm"):
        return common | kernel | {"bandwidth": "median", "n_init": 8, "max_iter": 30, "source": method_params("mlp-relu", P)}
    if method == "bayes":
        return common
    raise ValueError(f"method={method!r} is not known")


def sweep(
    figure: str,
    profile: str | Profile = "cpu",
    *,
    Ks: Sequence[int] | None = None,
    methods: Sequence[str] | None = None,
    runs: Sequence[int] | None = None,
    ns: Sequence[int] | None = None,
) -> list[Job]:
    """The jobs of ``figure`` at ``profile``, optionally restricted to some K, methods, runs or
    training sizes."""
    fig = _check_figure(figure)
    P = get_profile(profile)
    sizes = getattr(P, fig.sizes)
    where = f"the {figure} grid of profile {P.name!r}"
    grid_K = _restrict(Ks, sizes.Ks, lambda bad: f"K={bad} not in {where}: {list(sizes.Ks)}")
    meths = _restrict(methods, fig.methods, lambda bad: f"methods {bad} are not part of {figure}; use some of {list(fig.methods)}")
    all_runs = _restrict(runs, range(sizes.runs), lambda bad: f"runs {bad} not in {list(range(sizes.runs))} for profile {P.name!r}")
    grid_n = _restrict(ns, sizes.ns, lambda bad: f"n={bad} not in {where}: {list(sizes.ns)}")
    params = {method: method_params(method, P) | {"n_test": sizes.n_test} for method in meths}
    return [
        Job.make(method, K, n, r, P.name, **params[method])
        for K in grid_K
        for n in grid_n
        for r in all_runs
        for method in meths
    ]


def _restrict(requested: Sequence | None, grid: Sequence, message) -> tuple:
    """``requested`` (all of ``grid`` when ``None``) after checking that it lies in ``grid``."""
    if requested is None:
        return tuple(grid)
    bad = [v for v in requested if v not in grid]
    if bad:
        raise ValueError(message(bad))
    return tuple(requested)

"""Every figure of Section 3 as a declared sweep: the grid K x n x run x method at a profile.

``sweep("fig2", "cpu")`` lists the jobs of Figure 2 at the cpu profile. The MLP and kernel cells of
Figures 2, 4 and 6 (and of the regime map) with the same settings are the same jobs (one cache
entry), so a trained MLP is shared between the figures.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..device import default_dtype
from ..kernels.solvers import TARGET_TRAIN_MSE
from ..models import ACTIVATIONS
from ..profiles import Profile, SampleEfficiencySizes, get_profile
from ..train import A2_FINAL_LR_RATIO, A2_MIN_REL_IMPROVEMENT, A2_TARGET_MSE, LR_A2
from .cache import Job

__all__ = ["FIGURES", "Figure", "sweep", "method_params", "KERNEL_RIDGE", "SOLVER_MAX_ITER", "PAPER_GAMMA"]

#: Appendix A.2: "Exact kernel solves ... include a ridge parameter of 10^-6".
KERNEL_RIDGE = 1e-6
#: EigenPro's "optimization limit" (Appendix A.2 names none): at most this many epochs. Our choice,
#: the default of :class:`~monosem.kernels.LaplaceKernelRegressor`.
SOLVER_MAX_ITER = 200


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
    # global Laplace is RFM's iteration 0 (same bandwidth rule and solver): read off the rfm cell
    "regime": Figure("regime", "Regime map: MLPs against the oracles as n and the network grow (Section 3.2)",
                     ("mlp-relu", "mlp-reglu", "rfm", "oracle-laplace", "oracle-rfm", "bayes"), "regime"),
    # beyond the paper (page 09): the same methods as the separation gamma of the clusters falls
    "overlap": Figure("overlap", "Overlapping clusters: the separation gamma swept below the paper's 4 (beyond the paper)",
                      ("mlp-relu", "mlp-reglu", "rfm", "oracle-rfm", "gated-rfm", "bayes"), "overlap"),
    # beyond the paper (page 09): the Section 3.3 pipeline with its routing (learned gates / true
    # clusters) and its local features (learned metric G_c / none) swapped; Laplace local models
    # beyond the paper (page 09): cluster frequencies from a Zipf law, per-cluster test MSE
    "zipf": Figure("zipf", "Rare regimes: cluster frequencies from a Zipf law (beyond the paper)",
                   ("mlp-relu", "mlp-reglu", "rfm", "oracle-rfm", "bayes"), "zipf"),
    "swaps": Figure("swaps", "Routing or features? The Section 3.3 pipeline with its gates or its metric swapped (beyond the paper)",
                    ("mlp-relu", "gated-laplace-iso", "gated-laplace", "oracle-laplace", "oracle-laplace-gc", "gated-rfm",
                     "oracle-rfm"), "swaps"),
}

#: the paper's separation knob of the mixed-link model (eq. 3); a cell's key names gamma only
#: when it differs, so the paper's cells are shared with Figures 2 and 4
PAPER_GAMMA = 4.0


def _check_figure(figure: str) -> Figure:
    if figure not in FIGURES:
        raise ValueError(f"figure={figure!r} is not a known figure; use one of {sorted(FIGURES)}")
    return FIGURES[figure]


def _grid(fig: Figure, P: Profile):
    sizes = getattr(P, fig.sizes)
    if sizes is None:
        raise ValueError(f"profile {P.name!r} has no {fig.sizes} grid (figure {fig.name!r}); use profile 'long'")
    return sizes


def method_params(method: str, P: Profile, network: tuple[int, int] | None = None,
                  sizes: SampleEfficiencySizes | None = None) -> dict:
    """Every setting a method's result depends on, at profile ``P`` (the cache key): the full
    training protocol of an MLP cell, the solver settings of a kernel cell, the source network of a
    gated cell, and the working precision. ``network``: the (width, batch) of an MLP cell
    (default: the profile's); ``sizes``: the grid whose training protocol and solver settings
    apply (default ``P.sample_efficiency``, which Figure 4 shares).

    The compute functions of :mod:`.methods` read their configuration from these parameters only.
    """
    se = sizes if sizes is not None else P.sample_efficiency
    common = {"n_test": se.n_test, "dtype": str(default_dtype()).removeprefix("torch.")}
    if method.startswith("mlp-"):
        act = method[4:]
        if act not in ACTIVATIONS:
            raise ValueError(f"method={method!r} is not known; the MLPs are {[f'mlp-{a}' for a in ACTIVATIONS]}")
        width, batch = network if network is not None else (se.width, se.batch)
        return common | {
            "activation": act, "width": width, "batch": batch, "lr": LR_A2[act], "lr_final": LR_A2[act] * A2_FINAL_LR_RATIO,
            "min_steps": se.min_steps, "max_steps": se.max_steps, "eval_every": se.eval_every,
            "patience_evals": se.patience_evals, "target_mse": A2_TARGET_MSE,
            "rel_improvement": A2_MIN_REL_IMPROVEMENT,
        }
    kernel = {"ridge": KERNEL_RIDGE, "exact_max_n": se.exact_max_n, "target_mse": TARGET_TRAIN_MSE,
              "solver_max_iter": SOLVER_MAX_ITER}
    if method == "laplace":
        return common | kernel | {"bandwidth": "cluster-median"}
    if method == "rfm":
        return common | kernel | {"bandwidth": "cluster-median", "agop_samples": se.agop_samples}
    if method == "oracle-laplace":
        return common | kernel | {"bandwidth": "median"}
    if method == "oracle-rfm":
        return common | kernel | {"bandwidth": "median", "agop_samples": se.agop_samples}
    if method in ("gated-laplace", "gated-rfm", "gated-laplace-iso", "oracle-laplace-gc"):
        extra = {"agop_samples": se.agop_samples} if method == "gated-rfm" else {}
        return common | kernel | extra | {"bandwidth": "median", "n_init": 8, "max_iter": 30,
                                          "source": method_params("mlp-relu", P, sizes=se)}
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
    sizes = _grid(fig, P)
    where = f"the {figure} grid of profile {P.name!r}"
    grid_K = _restrict(Ks, sizes.Ks, lambda bad: f"K={bad} not in {where}: {list(sizes.Ks)}")
    meths = _restrict(methods, fig.methods, lambda bad: f"methods {bad} are not part of {figure}; use some of {list(fig.methods)}")
    all_runs = _restrict(runs, range(sizes.runs), lambda bad: f"runs {bad} not in {list(range(sizes.runs))} for profile {P.name!r}")
    grid_n = _restrict(ns, sizes.ns, lambda bad: f"n={bad} not in {where}: {list(sizes.ns)}")
    networks = sizes.network_sizes() if isinstance(sizes, SampleEfficiencySizes) else (None,)
    params = {
        (method, net): method_params(method, P, net) | {"n_test": sizes.n_test}
        for method in meths
        for net in (networks if method.startswith("mlp-") else (None,))
    }
    return [
        Job.make(method, K, n, r, P.name, **_with_data(p, variant))
        for variant in _data_variants(sizes)
        for K in grid_K
        for n in grid_n
        for r in all_runs
        for (method, _), p in params.items()
        if _declared(sizes, method, n)
    ]


def _declared(sizes, method: str, n: int) -> bool:
    """Whether the grid ``sizes`` has this method's cell at ``n`` (a profile's budget cut)."""
    includes = getattr(sizes, "includes", None)
    return includes is None or includes(method, n)


def _data_variants(sizes) -> list[dict]:
    """The data-model settings a grid sweeps besides K and n, as the key entries they add: the
    overlap grid's gamma (named only when it is not the paper's 4, so the paper's cells are
    shared with Figures 2 and 4), the rare-regime grid's Zipf exponent (always named, 0 too: those
    cells also record the per-cluster test MSE, which the Figure 2 cells do not)."""
    if hasattr(sizes, "gammas"):
        return [{} if float(g) == PAPER_GAMMA else {"gamma": float(g)} for g in sizes.gammas]
    if hasattr(sizes, "exponents"):
        return [{"zipf": float(e)} for e in sizes.exponents]
    return [{}]


def _with_data(params: dict, variant: dict) -> dict:
    """A cell's parameters on the data model ``variant`` (a gated cell's source network too)."""
    if not variant:
        return params
    out = params | variant
    if "source" in out:
        out["source"] = dict(out["source"]) | variant
    return out


def _restrict(requested: Sequence | None, grid: Sequence, message) -> tuple:
    """``requested`` (all of ``grid`` when ``None``) after checking that it lies in ``grid``."""
    if requested is None:
        return tuple(grid)
    bad = [v for v in requested if v not in grid]
    if bad:
        raise ValueError(message(bad))
    return tuple(requested)

"""Every figure of Section 3 as a declared sweep: the grid K x n x run x method at a profile.

``sweep("fig2", "cpu")`` lists the jobs of Figure 2 at the cpu profile. The MLP and kernel cells of
Figures 2, 4 and 6 (and of the regime map) with the same settings are the same jobs (one cache
entry), so a trained MLP is shared between the figures.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ..device import default_dtype
from ..kernels.solvers import TARGET_TRAIN_MSE
from ..models import ACTIVATIONS, AUX_WEIGHT, ROUTER_SCALE, matched_dense_width, parameter_count
from ..profiles import MoESizes, Profile, SampleEfficiencySizes, get_profile
from ..train import A2_FINAL_LR_RATIO, A2_MIN_REL_IMPROVEMENT, A2_TARGET_MSE, LR_A2
from .cache import Job
from .cells import PAPER_GAMMA, DataSpec, GatedSpec, KernelSpec, MixtureSpec, NetworkSpec, SolverSpec
from .registry import METHODS, discover

__all__ = ["FIGURES", "Figure", "register_figure", "sweep", "method_spec", "with_solver", "KERNEL_RIDGE", "SOLVER_MAX_ITER", "PAPER_GAMMA",
           "MIXED_LINK_D", "MOE_MATCHES", "moe_expert_width", "moe_dense_widths"]

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
    #: the grid: the Profile field holding Ks / ns / runs / n_test, or a function of the profile
    #: returning such a grid (a figure declared outside :class:`~monosem.profiles.Profile`)
    sizes: str | Callable[[Profile], Any]
    #: the figure's jobs at a profile, for a figure whose cells are not the mixed-link grid
    #: K x n x run x method (a question's own data and specs); ``None``: built from the grid
    jobs: Callable[[Profile], list[Job]] | None = None

    def grid(self, P: Profile):
        """The figure's grid at profile ``P`` (``None`` when the profile declares none)."""
        return self.sizes(P) if callable(self.sizes) else getattr(P, self.sizes)


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
    # beyond the paper (page 09): a top-1 mixture of K experts against dense ReLU / ReGLU networks
    # of its parameter count and of its forward FLOPs (the dense cells: plain mlp-* cells whose
    # width is the matched one, so a width equal to Figure 2's is Figure 2's cell)
    "moe": Figure("moe", "Explicit mixture of experts against dense MLPs at matched parameters and FLOPs (beyond the paper)",
                  ("moe-relu", "mlp-relu", "mlp-reglu"), "moe"),
    "swaps": Figure("swaps", "Routing or features? The Section 3.3 pipeline with its gates or its metric swapped (beyond the paper)",
                    ("mlp-relu", "gated-laplace-iso", "gated-laplace", "oracle-laplace", "oracle-laplace-gc", "gated-rfm",
                     "oracle-rfm"), "swaps"),
}



#: the mixed-link model's input dimension d (Section 3.2: 10 routing + 10 predictive coordinates)
MIXED_LINK_D = 20
#: the two accountings a dense network is matched to a mixture by (:func:`moe_dense_widths`)
MOE_MATCHES = ("params", "flops")


def moe_expert_width(K: int, profile: str | Profile) -> int:
    """The expert width m of page 09's mixture of ``K`` experts at ``profile``.

    The grid's own value when it names one (``MoESizes.expert_widths``); otherwise the rule: the
    m >= 1 whose mixture (E = K ReLU experts and the router, :func:`~monosem.models.parameter_count`
    ``kind="moe"``) has the parameter count closest to the dense ReLU network of width
    ``MoESizes.reference_width`` (default: the profile's ``sample_efficiency.width``, Figure 2's
    network); of two equally close widths the smaller. So the mixture spends about Figure 2's
    parameter budget, split over K experts and a router.
    """
    P = get_profile(profile)
    sizes = _grid(FIGURES["moe"], P)
    fixed = sizes.expert_width(K)
    if fixed is not None:
        return int(fixed)
    ref = sizes.reference_width or P.sample_efficiency.width
    d = MIXED_LINK_D
    target = parameter_count("mlp", d, ref, "relu")
    # parameter_count("moe", ...) = E (d + 1) + E (m (d + 2) + 1): linear in m, so the rounded
    # solution or its neighbour
    per_m = parameter_count("moe", d, 2, "relu", K) - parameter_count("moe", d, 1, "relu", K)
    guess = max(1, int((target - parameter_count("moe", d, 1, "relu", K)) // per_m) + 1)
    candidates = [m for m in (guess - 1, guess, guess + 1) if m >= 1]
    return min(candidates, key=lambda m: (abs(parameter_count("moe", d, m, "relu", K) - target), m))


def moe_dense_widths(K: int, profile: str | Profile, expert_width: int | None = None,
                     activation: str = "relu") -> dict[tuple[str, str], int]:
    """``{(dense activation, match): width}``: the widths of the dense ReLU and ReGLU networks
    matched to page 09's mixture of ``K`` experts (width ``expert_width``, default
    :func:`moe_expert_width`; ``activation`` experts) by parameter count (``"params"``) and by
    forward FLOPs per example (``"flops"``), as :func:`~monosem.models.matched_dense_width`
    rounds them (the closest count; the FLOPs of the routed computation: the router and one
    expert)."""
    m = expert_width if expert_width is not None else moe_expert_width(K, profile)
    return {(act, match): matched_dense_width(K, m, MIXED_LINK_D, activation, match, dense_activation=act)
            for act in ("relu", "reglu") for match in MOE_MATCHES}


def register_figure(fig: Figure) -> Figure:
    """Declare a figure (its methods, built in or registered with
    :func:`~monosem.experiments.registry.register_method`, and its grid), for :func:`sweep`, the
    runner, the cache and the command line."""
    old = FIGURES.get(fig.name)
    if old is not None and old != fig:
        raise ValueError(f"figure {fig.name!r} is declared already")
    FIGURES[fig.name] = fig
    return fig


def figure_of(figure: str) -> Figure:
    """The declared figure ``figure``, looking into every experiments module when it is not a
    built-in one."""
    if figure not in FIGURES:
        discover()
    if figure not in FIGURES:
        raise ValueError(f"figure={figure!r} is not a known figure; use one of {sorted(FIGURES)}")
    return FIGURES[figure]



def _grid(fig: Figure, P: Profile):
    sizes = fig.grid(P)
    if sizes is None:
        raise ValueError(f"profile {P.name!r} has no {fig.sizes} grid (figure {fig.name!r}); use profile 'long'")
    return sizes


def method_spec(method: str, P: Profile, network: tuple[int, int] | None = None,
                sizes: SampleEfficiencySizes | None = None, n_experts: int | None = None) -> Any:
    """Every setting of a method beyond its data, at profile ``P``, as the typed spec of
    :mod:`.cells` (part of the cache key): the full training protocol of an MLP cell, the solver
    settings of a kernel cell, the source network of a gated cell; ``None`` for the Bayes
    predictor. ``network``: the (width, batch) of an MLP cell (default: the profile's);
    ``sizes``: the grid whose training protocol and solver settings apply (default
    ``P.sample_efficiency``, which Figure 4 shares). A mixture-of-experts cell (``moe-<activation>``,
    page 09) needs ``n_experts``; its ``network`` is (expert width, batch), by default
    (:func:`moe_expert_width` of K = ``n_experts``, the profile's batch).

    The compute functions of :mod:`.methods` read their configuration from these specs only.
    """
    se = sizes if sizes is not None else P.sample_efficiency
    if method.startswith("moe-"):
        act = method[4:]
        if act not in ACTIVATIONS:
            raise ValueError(f"method={method!r} is not known; the mixtures are {[f'moe-{a}' for a in ACTIVATIONS]}")
        if n_experts is None:
            raise ValueError(f"n_experts must be given for method={method!r} (page 09: E = K, one expert per cluster)")
        width, batch = network if network is not None else (moe_expert_width(n_experts, P), se.batch)
        # the A.2 protocol of an MLP cell of the experts' activation (its learning rate too: the
        # router trains at the experts' rate), plus the mixture's own settings: E, the Switch
        # Transformer's load-balancing weight and the router's initial scale
        net = dataclasses.replace(_network_spec(act, width, batch, se, P), step_revision=1)
        return MixtureSpec(net, int(n_experts), AUX_WEIGHT, ROUTER_SCALE)
    if method.startswith("mlp-"):
        act = method[4:]
        if act not in ACTIVATIONS:
            raise ValueError(f"method={method!r} is not known; the MLPs are {[f'mlp-{a}' for a in ACTIVATIONS]}")
        width, batch = network if network is not None else (se.width, se.batch)
        return _network_spec(act, width, batch, se, P)
    solver = SolverSpec(KERNEL_RIDGE, se.exact_max_n, TARGET_TRAIN_MSE, SOLVER_MAX_ITER)
    if method in ("laplace", "rfm", "oracle-laplace", "oracle-rfm"):
        bandwidth = "median" if method.startswith("oracle-") else "cluster-median"
        return KernelSpec(bandwidth, solver, se.agop_samples if method.endswith("rfm") else None)
    if method in GATED_METHODS:
        local = KernelSpec("median", solver, se.agop_samples if method == "gated-rfm" else None)
        return GatedSpec(local, 8, 30, _network_spec("relu", se.width, se.batch, se, P))
    if method == "bayes":
        return None
    if method in METHODS:
        if METHODS[method].params is None:
            raise ValueError(f"method={method!r} has no settings of its own on a mixed-link grid: its figure builds its jobs")
        return METHODS[method].params(P, se)
    raise ValueError(f"method={method!r} is not known")


#: the Section 3.3 pipeline and page 09's swaps of it: cells that route with a trained ReLU network
GATED_METHODS = ("gated-laplace", "gated-rfm", "gated-laplace-iso", "oracle-laplace-gc")


def _network_spec(act: str, width: int, batch: int, se: SampleEfficiencySizes, P: Profile) -> NetworkSpec:
    """The A.2 protocol of a network of activation ``act`` at (width, batch) on the grid ``se``."""
    return NetworkSpec(act, int(width), int(batch), LR_A2[act], LR_A2[act] * A2_FINAL_LR_RATIO, se.min_steps, se.max_steps,
                       se.eval_every, se.patience_evals, A2_TARGET_MSE, A2_MIN_REL_IMPROVEMENT, int(P.step_revision))


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
    fig = figure_of(figure)
    P = get_profile(profile)
    if fig.jobs is not None:
        return _restricted(fig.jobs(P), figure, P, Ks=Ks, methods=methods, runs=runs, ns=ns)
    sizes = _grid(fig, P)
    where = f"the {figure} grid of profile {P.name!r}"
    grid_K = _restrict(Ks, sizes.Ks, lambda bad: f"K={bad} not in {where}: {list(sizes.Ks)}")
    meths = _restrict(methods, fig.methods, lambda bad: f"methods {bad} are not part of {figure}; use some of {list(fig.methods)}")
    all_runs = _restrict(runs, range(sizes.runs), lambda bad: f"runs {bad} not in {list(range(sizes.runs))} for profile {P.name!r}")
    grid_n = _restrict(ns, sizes.ns, lambda bad: f"n={bad} not in {where}: {list(sizes.ns)}")
    if isinstance(sizes, MoESizes):
        return _moe_jobs(P, sizes, grid_K, meths, all_runs, grid_n)
    networks = sizes.network_sizes() if isinstance(sizes, SampleEfficiencySizes) else (None,)
    specs = {(method, net): method_spec(method, P, net)
             for method in meths for net in (networks if method.startswith("mlp-") else (None,))}
    jobs = [
        Job(method, data, with_solver(spec, method, data), P.name)
        for variant in _data_variants(sizes)
        for K in grid_K
        for n in grid_n
        for r in all_runs
        for data in (_data(K, n, r, sizes.n_test, variant),)
        for (method, _), spec in specs.items()
        if _declared(sizes, method, n)
    ]
    if not jobs:  # every requested value lies in the grid, but the budget's cut removes them all
        cut = {f: getattr(sizes, f) for f in ("method_max_n",) if getattr(sizes, f, ())}
        raise ValueError(f"no cell of {where} has Ks={list(grid_K)}, ns={list(grid_n)}, runs={list(all_runs)}, "
                         f"methods={list(meths)}; its budget cut: {cut}")
    return jobs


def _restricted(jobs: list[Job], figure: str, P: Profile, **only: Sequence | None) -> list[Job]:
    """A figure's own jobs restricted to some K, methods, runs or training sizes (each checked
    against what the figure has at profile ``P``)."""
    attr = {"Ks": "K", "methods": "method", "runs": "run", "ns": "n"}
    for name, requested in only.items():
        if requested is None:
            continue
        have = sorted({getattr(j, attr[name]) for j in jobs})
        _restrict(requested, have, lambda bad, name=name, have=have: f"{name} {bad} not in the {figure} cells of profile {P.name!r}: {have}")
        jobs = [j for j in jobs if getattr(j, attr[name]) in set(requested)]
    return jobs


def _data(K: int, n: int, run: int, n_test: int, variant: dict | None = None) -> DataSpec:
    """A cell's data at the working precision (:func:`~monosem.device.default_dtype`)."""
    return DataSpec(int(K), int(n), int(run), int(n_test), dtype=str(default_dtype()).removeprefix("torch."), **(variant or {}))


def _moe_jobs(P: Profile, sizes: MoESizes, Ks: tuple, methods: tuple, runs: tuple, ns: tuple) -> list[Job]:
    """Page 10's mixture-of-experts grid: per K, the mixture (E = K experts of width
    :func:`moe_expert_width`) and every dense network of :func:`moe_dense_widths`, each an
    ordinary ``mlp-*`` cell at the matched width. Which comparison asked for a dense cell is not
    part of its key (the computation does not read it): a dense width that both accountings give
    is one cell, listed once, and :func:`~monosem.experiments.questions.experts.moe_rows` finds it again from
    the mixture's settings."""
    se = P.sample_efficiency
    jobs: list[Job] = []
    for K in Ks:
        m = moe_expert_width(K, P)
        specs = {}
        for method in methods:
            if method.startswith("moe-"):
                specs[(method, m)] = method_spec(method, P, (m, se.batch), n_experts=K)
            else:
                widths = moe_dense_widths(K, P, m, activation="relu")
                for (act, _), w in widths.items():
                    if f"mlp-{act}" == method:
                        specs[(method, w)] = method_spec(method, P, (w, se.batch))
        jobs += [Job(method, _data(K, n, r, sizes.n_test), spec, P.name) for n in ns for r in runs for (method, _), spec in specs.items()]
    return list(dict.fromkeys(jobs))


def _declared(sizes, method: str, n: int) -> bool:
    """Whether the grid ``sizes`` has this method's cell at ``n`` (a profile's budget cut)."""
    includes = getattr(sizes, "includes", None)
    return includes is None or includes(method, n)


def _data_variants(sizes) -> list[dict]:
    """The data-model settings a grid sweeps besides K and n (:class:`~.cells.DataSpec` fields):
    the overlap grid's separation gamma, the rare-regime grid's Zipf exponent (0 too: those cells
    also record the per-cluster test MSE, which the Figure 2 cells do not)."""
    if hasattr(sizes, "gammas"):
        return [{"gamma": float(g)} for g in sizes.gammas]
    if hasattr(sizes, "exponents"):
        return [{"zipf": float(e)} for e in sizes.exponents]
    return [{}]


#: the revision of the EigenPro iteration (:mod:`monosem.kernels.eigenpro`), named in the key of
#: every cell that may run it, so that no cell computed before a change of the iteration is
#: reused (a cell solved exactly keeps its key and its result). Revision 2 judges divergence by
#: the training MSE of the iterate on a fixed subset of rows against the best so far (revision 1
#: judged it by batch residuals, which can miss a slow divergence).
EIGENPRO_REVISION = 2


def may_run_eigenpro(method: str, data: DataSpec, solver: SolverSpec) -> bool:
    """Whether a kernel cell's computation may solve a system of ``solver.exact_max_n`` or more
    examples (the regressors' rule: EigenPro from there on). A global method solves one of ``n``;
    a per-cluster oracle one per cluster, at most 1.5 n / K on the balanced mixtures (cluster
    sizes are binomial: at n / K >= 400 they never come near 1.5 n / K) and up to ``n`` under Zipf
    weights; a gated predictor one per learned gate, which may merge clusters (bounded by
    ``n``). :func:`monosem.experiments.methods.compute_oracle` checks the bound on the data."""
    n, K = data.n, data.K
    if method.startswith("oracle-laplace-gc") or not method.startswith("oracle-"):
        largest = n
    else:
        largest = n if data.zipf is not None else math.ceil(1.5 * n / K)
    return largest >= solver.exact_max_n


def with_solver(spec: Any, method: str, data: DataSpec) -> Any:
    """A kernel or gated cell's spec naming the EigenPro revision when it may run EigenPro."""
    if isinstance(spec, KernelSpec) and may_run_eigenpro(method, data, spec.solver):
        return dataclasses.replace(spec, solver=dataclasses.replace(spec.solver, eigenpro_revision=EIGENPRO_REVISION))
    if isinstance(spec, GatedSpec):
        return dataclasses.replace(spec, local=with_solver(spec.local, method, data))
    return spec


def _restrict(requested: Sequence | None, grid: Sequence, message) -> tuple:
    """``requested`` (all of ``grid`` when ``None``) after checking that it lies in ``grid``."""
    if requested is None:
        return tuple(grid)
    bad = [v for v in requested if v not in grid]
    if bad:
        raise ValueError(message(bad))
    return tuple(requested)

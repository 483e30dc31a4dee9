"""Run profiles: how big every experiment is.

Four profiles, chosen by name everywhere (the ``profile`` parameter of every notebook, the CLI's
``--profile``):

``smoke``
    seconds per section: the unit tests, nbval and CI. Numbers are not meant to show anything.
``cpu`` (the default)
    the rendered book on a 2-core laptop: every phenomenon of the paper visible at reduced scale.
    Pages that show a ``cpu`` result label it as reduced-scale and say what was shrunk.
``long``
    Sections 3.2 and 3.3 (Figures 2, 4, 6) at the paper's two smallest training sizes and its
    protocol, with the networks narrowed to what a 2-core CPU affords (width 1 024, batch 1 024)
    and one run, plus the *regime map* (``Profile.regime``): K = 10 and 50, n from 10 000 to
    200 000, two network sizes. Hours of CPU: computed once and shipped as recorded results
    (``monosem/recorded/``); the other sections keep their ``cpu`` sizes. What the budget cut
    from the paper's grid is declared in the sizes (``runs``, ``ns``, ``method_max_n``).
``gpu``
    one free Colab session on a T4 (15 GB): Sections 1 and 3.1 at the paper's settings, Sections
    3.2-3.3 at the long profile's network size (width 1 024, batch 1 024) and A.2 protocol on
    K = 1, 10, 50 (Figure 4: 2, 10, 50) and n = 20 000, 50 000; the theory pages as ``cpu``.
    Sized by the cost model of :mod:`monosem.experiments.estimate` (no GPU has been measured yet)
    to at most about 45 minutes per page.
``paper``
    the paper's exact settings (Appendix A); a GPU job.

Each profile is a frozen dataclass holding one frozen dataclass of sizes per experiment, so that
a reader can see the whole scale of a run at a glance (``get_profile("cpu")``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import torch

__all__ = [
    "PROFILE_NAMES",
    "DEFAULT_PROFILE",
    "Profile",
    "SettingSizes",
    "FeatureLearningSizes",
    "SpecializationSizes",
    "SampleEfficiencySizes",
    "GatesSizes",
    "OverlapSizes",
    "ZipfSizes",
    "MoESizes",
    "Theorem1Sizes",
    "Theorem2Sizes",
    "get_profile",
    "announce",
    "cuda_hint",
    "warn_without_cuda",
]

PROFILE_NAMES = ("smoke", "cpu", "long", "gpu", "paper")
DEFAULT_PROFILE = "cpu"


@dataclass(frozen=True)
class SettingSizes:
    """Section 2 (data models): sample sizes for the pictures and the Bayes-risk estimates."""

    n_plot: int
    n_bayes: int
    Ks: tuple[int, ...] = (1, 2, 10, 50)


@dataclass(frozen=True)
class FeatureLearningSizes:
    """Section 1 (global RFM vs Laplace as K grows, Appendix A.2 kernels).

    ``iterations`` AGOP updates (the paper: 3); ``runs`` seeds r = 0.. (data, links).
    """

    n_train: int
    n_test: int
    Ks: tuple[int, ...] = (1, 2, 10, 50)
    runs: int = 1
    iterations: int = 3


@dataclass(frozen=True)
class SpecializationSizes:
    """Section 3.1 / Appendix A.1 (Figure 1): the four MLPs on ``figure1_model()``."""

    width: int
    n_train: int
    n_val: int
    n_test: int
    batch: int
    max_steps_relu: int
    max_steps_other: int
    eval_every: int
    relu_lr_grid: tuple[float, ...]
    seeds: tuple[int, ...]
    #: initialization ablation (lazy-training scale alpha, lr / alpha), on the first seed only
    lazy_output_scales: tuple[float, ...] = (10.0, 100.0)
    ablation_activations: tuple[str, ...] = ("relu", "gelu")
    #: second ablation: hidden initialization times this factor, for these activations
    small_init_scale: float = 0.1
    small_init_activations: tuple[str, ...] = ("relu", "reglu")


class _MethodCut:
    """A grid with a budget's cut ``method_max_n`` (``((method, max_n), ...)``)."""

    method_max_n: tuple[tuple[str, int], ...]

    def includes(self, method: str, n: int) -> bool:
        """Whether the grid has a ``method`` cell at training size ``n`` (every K and run)."""
        return all(n <= bound for m, bound in self.method_max_n if m == method)


@dataclass(frozen=True)
class SampleEfficiencySizes(_MethodCut):
    """Section 3.2 / Appendix A.2 (Figures 2 and 6); the MLP and kernel settings are shared with
    Figure 4. ``exact_max_n``: exact kernel solves below this many examples, EigenPro above (the
    paper: 11 000); ``agop_samples``: RFM's AGOP from at most this many points (the paper: 20 000)."""

    Ks: tuple[int, ...]
    ns: tuple[int, ...]
    n_test: int
    runs: int
    width: int
    batch: int
    min_steps: int
    max_steps: int
    eval_every: int
    patience_evals: int
    exact_max_n: int = 11_000
    agop_samples: int = 20_000
    #: the (width, batch) pairs of the MLP cells; ``None``: the one pair (width, batch). The regime
    #: map trains every MLP cell at several network sizes.
    mlp_sizes: tuple[tuple[int, int], ...] | None = None
    #: the budget's cut, ``((method, max_n), ...)``: these methods' cells exist only at n <= max_n
    #: (the ``long`` profile's global kernels, whose cost grows as n^2). Empty: no cut.
    method_max_n: tuple[tuple[str, int], ...] = ()

    def network_sizes(self) -> tuple[tuple[int, int], ...]:
        """The (width, batch) pairs at which the MLP cells are trained."""
        return self.mlp_sizes if self.mlp_sizes is not None else ((self.width, self.batch),)



@dataclass(frozen=True)
class GatesSizes(_MethodCut):
    """Section 3.3 / Appendix A.3 (Figure 4)."""

    Ks: tuple[int, ...]
    ns: tuple[int, ...]
    n_test: int
    runs: int
    #: the budget's cut, as :attr:`SampleEfficiencySizes.method_max_n`
    method_max_n: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class OverlapSizes:
    """Beyond the paper, question 1 (page 09): the mixed-link model with its separation knob
    gamma of sigma_K = (1 - rho_K) / (2 gamma) swept down from the paper's 4, at one K and n.
    The networks and kernels follow the profile's ``sample_efficiency`` protocol."""

    Ks: tuple[int, ...]
    ns: tuple[int, ...]
    gammas: tuple[float, ...]
    n_test: int
    runs: int = 1


@dataclass(frozen=True)
class ZipfSizes:
    """Beyond the paper, question 2 (page 09): the mixed-link model with cluster probabilities
    pi_c proportional to (c + 1)^-s for each exponent s, at one K and n; the per-cluster test MSE
    is measured on a cluster-balanced test set. Networks and kernels follow the profile's
    ``sample_efficiency`` protocol."""

    Ks: tuple[int, ...]
    ns: tuple[int, ...]
    exponents: tuple[float, ...]
    n_test: int
    runs: int = 1


@dataclass(frozen=True)
class MoESizes:
    """Beyond the paper, question 3 (page 09): an explicit top-1 mixture of experts (Switch
    Transformer routing, Fedus, Zoph & Shazeer 2022; sparsely gated experts, Shazeer et al. 2017)
    against dense ReLU and ReGLU networks of the same parameter count and, separately, of the same
    forward FLOPs per example, on Figure 2's data (the nested pools and test sets of run r, the
    model seed 1000 + r) at each K and n of the grid.

    * ``E = K`` experts: one per cluster, so that a router that recovers the clusters can give
      every cluster its own expert.
    * The experts are ReLU networks of width m. ``expert_widths`` gives m per K,
      ``((K, m), ...)``; a K it does not name gets the rule of
      :func:`monosem.experiments.families.mixtures.moe_expert_width`: the m >= 1 whose mixture has the
      parameter count closest to the dense ReLU network of width ``reference_width`` (default:
      the profile's ``sample_efficiency.width``, Figure 2's network).
    * The mixture and the dense networks train with the profile's ``sample_efficiency``
      protocol (Appendix A.2: batch, cosine schedule, min / max updates, stopping rules), the
      mixture at the A.2 ReLU rate (its experts are ReLU networks); ``n_test`` should be
      Figure 2's, so that a dense cell at Figure 2's width is Figure 2's cell.
    """

    Ks: tuple[int, ...]
    ns: tuple[int, ...]
    n_test: int
    runs: int = 1
    reference_width: int | None = None
    expert_widths: tuple[tuple[int, int], ...] = ()

    def expert_width(self, K: int) -> int | None:
        """The expert width this grid fixes for ``K`` (``None``: the rule applies)."""
        return dict(self.expert_widths).get(K)


@dataclass(frozen=True)
class Theorem1Sizes:
    """Section 4.1 / Appendix B.1: neurons, cluster counts, separations, flow lengths."""

    m: int  # teacher-only neurons per (K, R)
    Ks: tuple[int, ...]
    Rs: tuple[float, ...]
    t_max: float  # teacher-only horizon
    epsilons: tuple[float, ...]  # initialization scales of the tracking experiment
    n_mc: int  # Monte-Carlo points per cluster for the interaction term of the full network
    m_full: int = 8  # neurons of the full two-layer network
    t_full: float = 600.0  # horizon of the full network run (alignment + fitting)
    alphas: tuple[float, ...] = (0.0, 0.5, 1.0)  # target (1 - alpha) h3 + alpha h_k, k = 2, 4


@dataclass(frozen=True)
class Theorem2Sizes:
    """Section 4.2 / Appendix B.2: the separation experiment (sizes n = ceil(n_scale K^A) <= n_max).

    The paper runs no experiment for Theorem 2; the ``paper`` profile is only a larger one.
    """

    Ks: tuple[int, ...]
    exponents: tuple[float, ...]
    n_test: int
    n_max: int
    n_scale: float = 4.0
    mlp_width_per_cluster: int = 4
    mlp_steps: int = 1500
    mlp_lr: float = 0.02
    mlp_budget_factors: tuple[float, ...] = (3.0, 6.0)
    rho_ratio: float = 0.1
    rfm_iterations: int = 3


@dataclass(frozen=True)
class Profile:
    """One run profile: a name and the sizes of every experiment."""

    name: str
    description: str
    setting: SettingSizes
    feature_learning: FeatureLearningSizes
    specialization: SpecializationSizes
    sample_efficiency: SampleEfficiencySizes
    gates: GatesSizes
    theorem1: Theorem1Sizes
    theorem2: Theorem2Sizes
    reduced_scale: bool = field(default=True)
    #: the regime map of Section 3.2 (K, n and network size swept at the A.2 protocol); only the
    #: ``long`` profile has one
    regime: SampleEfficiencySizes | None = None
    #: page 09's overlap sweep (beyond the paper)
    overlap: OverlapSizes | None = None
    #: page 09's rare regimes (beyond the paper)
    zipf: ZipfSizes | None = None
    #: page 09's "routing or features?" swaps of the Section 3.3 pipeline (beyond the paper)
    swaps: GatesSizes | None = None
    #: page 09's explicit mixture of experts at matched parameters and FLOPs (beyond the paper)
    moe: MoESizes | None = None
    #: the revision of the hand-derived training step its networks use
    #: (:data:`monosem.train.step.STEP_REVISIONS`; this module sits below ``train`` and cannot
    #: import the current one, :data:`~monosem.train.step.STEP_REVISION`, which a test checks is
    #: this default). A profile whose networks are recorded keeps the revision they were computed
    #: with, so that the CLI recomputes them from their keys.
    step_revision: int = 2


_PROFILES: dict[str, Profile] = {
    "smoke": Profile(
        name="smoke",
        description="seconds per section; for tests and CI only",
        setting=SettingSizes(n_plot=600, n_bayes=4_096),
        feature_learning=FeatureLearningSizes(n_train=600, n_test=512, Ks=(1, 10)),
        specialization=SpecializationSizes(
            width=64, n_train=4_000, n_val=512, n_test=512, batch=256, max_steps_relu=150,
            max_steps_other=150, eval_every=50, relu_lr_grid=(0.004,), seeds=(0,),
        ),
        sample_efficiency=SampleEfficiencySizes(
            Ks=(1, 10), ns=(500, 1_000), n_test=512, runs=1, width=64, batch=256,
            min_steps=100, max_steps=200, eval_every=50, patience_evals=4,
            agop_samples=2_000,
        ),
        gates=GatesSizes(Ks=(2, 10), ns=(1_000,), n_test=512, runs=1),
        theorem1=Theorem1Sizes(
            m=12, Ks=(3,), Rs=(4.0, 8.0), t_max=2_000.0, epsilons=(1e-2, 3e-3), n_mc=256, m_full=4, t_full=150.0,
            alphas=(0.0, 1.0),
        ),
        theorem2=Theorem2Sizes(
            Ks=(2, 4), exponents=(1.0, 2.0), n_test=512, n_max=256, mlp_steps=300, rfm_iterations=1,
        ),
        overlap=OverlapSizes(Ks=(10,), ns=(1_000,), gammas=(4.0, 0.5), n_test=512),
        swaps=GatesSizes(Ks=(2, 10), ns=(1_000,), n_test=512, runs=1),
        zipf=ZipfSizes(Ks=(10,), ns=(1_000,), exponents=(0.0, 2.0), n_test=500),
        moe=MoESizes(Ks=(10,), ns=(500, 1_000), n_test=512),
    ),
    "cpu": Profile(
        name="cpu",
        description="the rendered book on a 2-core laptop; every phenomenon at reduced scale",
        setting=SettingSizes(n_plot=3_000, n_bayes=50_000),
        feature_learning=FeatureLearningSizes(n_train=4_000, n_test=2_048, Ks=(1, 2, 10, 50), runs=2),
        specialization=SpecializationSizes(
            width=512, n_train=100_000, n_val=4_096, n_test=2_048, batch=256, max_steps_relu=6_000,
            max_steps_other=6_000, eval_every=500, relu_lr_grid=(0.004, 0.016), seeds=(0, 1, 2),
        ),
        sample_efficiency=SampleEfficiencySizes(
            # the A.2 protocol's shape at a tenth of its length: at least 5 000 and at most
            # 20 000 updates, evaluations every 500, a 3 000-update plateau (the paper: 20 000,
            # 200 000, 500, 30 000), so the target, plateau and cap rules all take part
            Ks=(1, 2, 10, 50), ns=(2_500, 5_000, 10_000), n_test=2_048, runs=1, width=256,
            batch=512, min_steps=5_000, max_steps=20_000, eval_every=500, patience_evals=6,
            exact_max_n=4_000, agop_samples=2_000,
        ),
        gates=GatesSizes(Ks=(2, 5, 10, 50), ns=(5_000, 10_000), n_test=2_048, runs=1),
        theorem1=Theorem1Sizes(
            m=96, Ks=(3, 5), Rs=(4.0, 8.0, 16.0), t_max=20_000.0, epsilons=(1e-2, 3e-3, 1e-3), n_mc=4_096,
            m_full=8, t_full=1_000.0, alphas=(0.0, 0.5, 0.9, 1.0),
        ),
        theorem2=Theorem2Sizes(Ks=(2, 4, 8, 16, 32), exponents=(1.0, 1.5, 2.0, 2.5, 3.0), n_test=2_048, n_max=4_096),
        overlap=OverlapSizes(Ks=(10,), ns=(5_000,), gammas=(4.0, 1.0, 0.5, 0.25), n_test=2_048),
        # Figure 4's largest cpu size: its gated cells and source networks are shared
        swaps=GatesSizes(Ks=(2, 10, 50), ns=(10_000,), n_test=2_048, runs=1),
        zipf=ZipfSizes(Ks=(10,), ns=(5_000,), exponents=(0.0, 1.0, 2.0), n_test=2_000),
        # Figure 2's K = 10 and 50 at its smallest and largest cpu sizes: the budget, about 6
        # one-thread minutes (all three sizes: about 9, extrapolated from a partial run)
        moe=MoESizes(Ks=(10, 50), ns=(2_500, 10_000), n_test=2_048),
    ),
    "paper": Profile(
        name="paper",
        description="the paper's exact settings (Appendix A); a GPU job",
        setting=SettingSizes(n_plot=5_000, n_bayes=200_000),
        feature_learning=FeatureLearningSizes(n_train=20_000, n_test=4_096, Ks=(1, 2, 10, 50), runs=5),
        specialization=SpecializationSizes(
            width=2_048, n_train=100_000, n_val=4_096, n_test=2_048, batch=2_048,
            max_steps_relu=40_000, max_steps_other=20_000, eval_every=500,
            relu_lr_grid=(0.004, 0.008, 0.012, 0.016, 0.024, 0.032), seeds=(0,),
        ),
        sample_efficiency=SampleEfficiencySizes(
            Ks=(1, 2, 10, 50), ns=(20_000, 50_000, 100_000, 200_000), n_test=4_096, runs=5,
            width=4_096, batch=4_096, min_steps=20_000, max_steps=200_000, eval_every=500,
            patience_evals=60,
        ),
        gates=GatesSizes(Ks=(2, 5, 10, 50), ns=(20_000, 50_000, 100_000, 200_000), n_test=4_096, runs=5),
        theorem1=Theorem1Sizes(
            m=256, Ks=(3, 5, 10), Rs=(4.0, 8.0, 16.0, 32.0), t_max=50_000.0,
            epsilons=(1e-2, 3e-3, 1e-3, 3e-4), n_mc=100_000, m_full=64, t_full=400.0,
            alphas=(0.0, 0.5, 0.9, 0.99, 1.0),
        ),
        theorem2=Theorem2Sizes(
            Ks=(2, 4, 8, 16, 32), exponents=(1.0, 1.5, 2.0, 2.5, 3.0), n_test=4_096, n_max=200_000, mlp_steps=5_000,
        ),
        # beyond the paper: at its smallest Figure 2 size but one, with its networks and protocol
        overlap=OverlapSizes(Ks=(10,), ns=(50_000,), gammas=(4.0, 1.0, 0.5, 0.25), n_test=4_096),
        swaps=GatesSizes(Ks=(2, 10, 50), ns=(50_000,), n_test=4_096, runs=1),
        zipf=ZipfSizes(Ks=(10,), ns=(50_000,), exponents=(0.0, 1.0, 2.0), n_test=4_000),
        # Figure 2's grid at K = 10 and 50: its sizes, test sets and five runs
        moe=MoESizes(Ks=(10, 50), ns=(20_000, 50_000, 100_000, 200_000), n_test=4_096, runs=5),
        reduced_scale=False,
    ),
}


_CPU = _PROFILES["cpu"]
#: the long profile's cut: global RFM costs ~n^2 (the recorded cells' one-thread times, which the
#: reproduce page lists), so its cells stop at n = 50 000 while the networks go on
_LONG_GLOBAL_MAX_N = 50_000
_PROFILES["long"] = Profile(
    name="long",
    description=("Sections 3.2-3.3 at the paper's two smallest sizes and A.2 protocol, networks narrower than "
                 "the paper's with a smaller batch (monosem profiles lists them), five runs; hours of CPU, "
                 "shipped as recorded results. Other sections as 'cpu'"),
    setting=_CPU.setting,
    feature_learning=_CPU.feature_learning,
    specialization=_CPU.specialization,
    # Figures 2 and 6 at the paper's two smallest sizes (the paper: 4 sizes) and its five runs
    # (Figure 6's GELU and SwiGLU at 20 000 only); Figure 4 on the paper's K grid. The regime map
    # extends K = 10, 50 to 200 000.
    sample_efficiency=SampleEfficiencySizes(
        Ks=(1, 2, 10, 50), ns=(20_000, 50_000), n_test=4_096, runs=5, width=1_024,
        batch=1_024, min_steps=20_000, max_steps=200_000, eval_every=500, patience_evals=60,
        method_max_n=(("mlp-gelu", 20_000), ("mlp-swiglu", 20_000)),
    ),
    gates=GatesSizes(Ks=(2, 5, 10, 50), ns=(20_000, 50_000), n_test=4_096, runs=5),
    theorem1=_CPU.theorem1,
    theorem2=_CPU.theorem2,
    overlap=_CPU.overlap,
    swaps=_CPU.swaps,
    zipf=_CPU.zipf,
    moe=_CPU.moe,
    regime=SampleEfficiencySizes(
        Ks=(10, 50), ns=(10_000, 20_000, 50_000, 100_000, 200_000), n_test=4_096, runs=1, width=1_024,
        batch=1_024, min_steps=20_000, max_steps=200_000, eval_every=500, patience_evals=60,
        mlp_sizes=((256, 512), (1_024, 1_024)), method_max_n=(("rfm", _LONG_GLOBAL_MAX_N),),
    ),
    # its 60 recorded network cells (about 15 core-hours) were computed with revision 1
    step_revision=1,
)

_PAPER = _PROFILES["paper"]
_PROFILES["gpu"] = Profile(
    name="gpu",
    description=("one Colab T4 session: Sections 1 and 3.1 at the paper's settings, 3.2-3.3 with the long "
                 "profile's networks and the A.2 protocol, one run at the paper's two smallest sizes; theory as 'cpu'"),
    setting=_PAPER.setting,
    feature_learning=_PAPER.feature_learning,
    specialization=_PAPER.specialization,
    sample_efficiency=SampleEfficiencySizes(
        Ks=(1, 10, 50), ns=(20_000, 50_000), n_test=4_096, runs=1, width=1_024,
        batch=1_024, min_steps=20_000, max_steps=200_000, eval_every=500, patience_evals=60,
    ),
    gates=GatesSizes(Ks=(2, 10, 50), ns=(20_000, 50_000), n_test=4_096, runs=1),
    theorem1=_CPU.theorem1,
    theorem2=_CPU.theorem2,
    overlap=OverlapSizes(Ks=(10,), ns=(20_000,), gammas=(4.0, 1.0, 0.5, 0.25), n_test=4_096),
    swaps=GatesSizes(Ks=(2, 10, 50), ns=(20_000,), n_test=4_096, runs=1),
    zipf=ZipfSizes(Ks=(10,), ns=(20_000,), exponents=(0.0, 1.0, 2.0), n_test=4_000),
    # Figure 2's gpu grid at K = 10 and 50 (its sizes and test sets)
    moe=MoESizes(Ks=(10, 50), ns=(20_000, 50_000), n_test=4_096),
)


def get_profile(name: str | Profile = DEFAULT_PROFILE) -> Profile:
    """The :class:`Profile` called ``name`` (one of :data:`PROFILE_NAMES`).

    A :class:`Profile` instance is returned unchanged, so functions can take either.
    """
    if isinstance(name, Profile):
        return name
    if not isinstance(name, str) or name not in _PROFILES:
        raise ValueError(f"profile={name!r} is not a known profile; use one of {list(PROFILE_NAMES)}")
    return _PROFILES[name]


def cuda_hint(profile: str | Profile) -> str:
    """A line pointing to the ``gpu`` profile when CUDA is present and ``profile`` is a CPU one
    (``smoke`` or ``cpu``); otherwise the empty string."""
    P = get_profile(profile)
    if P.name in ("smoke", "cpu") and torch.cuda.is_available():
        return ("CUDA is available: set profile = \"gpu\" in the parameters cell to run this page at a "
                "larger scale (estimated at most about 45 minutes per page on a T4: python -m monosem estimate)")
    return ""


#: the profiles sized for a GPU: without CUDA they run on the CPU, for hours
GPU_PROFILES = ("gpu", "paper")
_warned_without_cuda = False


def warn_without_cuda(profile: str | Profile) -> str:
    """Warn (a ``RuntimeWarning``, once per process) when ``profile`` is sized for a GPU
    (``gpu``, ``paper``) and CUDA is not available; return the warning's text, or the empty
    string when there is nothing to warn about or the warning was already given."""
    global _warned_without_cuda
    P = get_profile(profile)
    if P.name not in GPU_PROFILES or _warned_without_cuda or torch.cuda.is_available():
        return ""
    _warned_without_cuda = True
    message = (f"profile {P.name!r} is sized for a GPU, but CUDA is not available: everything will run on the "
               "CPU, for hours (on Colab: Runtime > Change runtime type > a GPU, then run again; on a CPU "
               "machine set profile = \"cpu\" in the parameters cell)")
    warnings.warn(message, RuntimeWarning, stacklevel=2)
    return message


def announce(profile: str | Profile) -> str:
    """The line a page prints about its profile (plus :func:`cuda_hint` when it applies);
    warns once, via :func:`warn_without_cuda`, when a GPU profile meets no CUDA."""
    P = get_profile(profile)
    warn_without_cuda(P)
    return "\n".join(line for line in (f"profile {P.name!r}: {P.description}", cuda_hint(P)) if line)

"""The paper's data models: Gaussian mixtures with a clustered single-index response (Section 2).

Every model is a :class:`ClusteredSingleIndexModel`,

    c ~ Unif([K]),   x | c ~ N(mu_c, Sigma),   y = g_c(<x, v_c>) + eps,   eps ~ N(0, sigma^2),

a ground-truth object that knows its means, (shared, diagonal) covariance, predictive directions
and links. It samples ``(x, y, c)``, evaluates the noiseless regression function ``f_star(x, c)``
and the Bayes predictor ``bayes(x)`` (posterior cluster probabilities under the known mixture
times the noiseless local predictions, Appendix A.2 "Bayes reference").

The four models of the paper:

* :func:`figure1_model` -- Section 3.1 / Appendix A.1 (Figure 1).
* :func:`mixed_link_model` -- Section 3.2-3.3 / Appendices A.2-A.3 (Figures 2, 4, 6).
* :func:`symmetric_mixture` -- Section 4.1 (Theorem 1).
* :func:`noiseless_routing_mixture` -- Section 4.2 (Theorem 2).

Clusters are numbered from 0 in code (the paper numbers them from 1).

One module for Section 2's data models: they share :class:`ClusteredSingleIndexModel`, its
sampling and its Bayes predictor; each model is a short constructor.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Callable

import torch

from .checks import check_int, check_positive
from .device import get_device, resolve_dtype, torch_generator

#: Appendix A.2, eq. (6): the label noise of the mixed-link model, epsilon ~ N(0, 0.02^2)
MIXED_LINK_NOISE_STD = 0.02
#: its variance, 4e-4: the paper's training-MSE target for the networks and for EigenPro
#: ("which equals the label-noise variance"); the one home of that number
LABEL_NOISE_VARIANCE = MIXED_LINK_NOISE_STD**2

__all__ = [
    "MAX_MIXED_LINK_K",
    "MIXED_LINK_NOISE_STD",
    "LABEL_NOISE_VARIANCE",
    "LINKS",
    "Link",
    "ClusteredSingleIndexModel",
    "figure1_model",
    "mixed_link_model",
    "symmetric_mixture",
    "noiseless_routing_mixture",
    "farthest_point_directions",
    "zipf_weights",
    "drifted_model",
    "DRIFT_ANGLES",
    "TRAIN_SEED_BASE",
    "TEST_SEED_BASE",
    "LINK_SEED_BASE",
    "model_seed",
]

#: Appendix A.2 seeds for run r: links and model initialization 1000+r, training pool 12345+r,
#: test set 54321+r.
LINK_SEED_BASE = 1000
TRAIN_SEED_BASE = 12345
TEST_SEED_BASE = 54321


def model_seed(run: int) -> int:
    """The seed of run ``run``'s links and network initialization (Appendix A.2: 1000 + r)."""
    return LINK_SEED_BASE + int(run)
#: The paper fixes the mixed-link geometry per K but does not give its seed; ours is this + K.
GEOMETRY_SEED_BASE = 2026

# Rows are drawn in fixed-size chunks, in order, from one generator, so the first n rows of a pool
# of size N > n are exactly the pool of size n ("nested training pools", Appendix A.2).
_CHUNK = 8192


def _he2(t: torch.Tensor) -> torch.Tensor:
    return (t * t - 1.0) / math.sqrt(2.0)


def _he3(t: torch.Tensor) -> torch.Tensor:
    return (t**3 - 3.0 * t) / math.sqrt(6.0)


def _ramp(t: torch.Tensor) -> torch.Tensor:
    return t.clamp(min=0.0) - (t - 1.0).clamp(min=0.0)


#: The link functions used in the paper, by name: the normalized Hermite polynomials
#: He2/sqrt(2!) and He3/sqrt(3!), sin, tanh (eq. 5) and the clipped ramp g(t) = t_+ - (t-1)_+
#: of Section 4.2.
LINKS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "he2": _he2,
    "sin": torch.sin,
    "tanh": torch.tanh,
    "he3": _he3,
    "ramp": _ramp,
}

#: The mixed-link family of eq. (5), in the order the link seed indexes it.
MIXED_LINKS = ("he2", "sin", "tanh")


@dataclass(frozen=True)
class Link:
    """A link g(t) = base(scale * t), with ``base`` one of :data:`LINKS`.

    ``scale`` exists for Figure 1's He2(sqrt(d) <v_c, x>)/sqrt(2), whose projection has
    variance 1/d.
    """

    name: str
    scale: float = 1.0

    def __post_init__(self) -> None:
        if self.name not in LINKS:
            raise ValueError(f"link={self.name!r} is not a known link; use one of {sorted(LINKS)}")
        if not (math.isfinite(self.scale) and self.scale > 0):
            raise ValueError(f"link scale={self.scale!r} must be a positive finite number")

    def __call__(self, t: torch.Tensor) -> torch.Tensor:
        return LINKS[self.name](t * self.scale if self.scale != 1.0 else t)

    def __str__(self) -> str:
        return self.name if self.scale == 1.0 else f"{self.name}({self.scale:g}·t)"


@dataclass(frozen=True, eq=False)
class ClusteredSingleIndexModel:
    """A K-cluster Gaussian mixture with a cluster-specific single-index response (Section 2).

    Parameters
    ----------
    name:
        Human-readable name.
    means:
        ``(K, d)`` cluster means mu_c.
    directions:
        ``(K, d)`` unit predictive directions v_c.
    cov_diag:
        ``(d,)`` diagonal of the covariance shared by all clusters; zero entries are noiseless
        coordinates (Section 4.2).
    links:
        One :class:`Link` per cluster.
    noise_std:
        Standard deviation sigma of the additive Gaussian label noise.
    balanced:
        Default for :meth:`sample`: ``True`` gives cluster counts that differ by at most one in
        every prefix of a sample (Appendix A.2); ``False`` draws c i.i.d. uniform.
    weights:
        ``(K,)`` cluster probabilities pi_c (``None``: uniform, every model of the paper). With
        weights the clusters are drawn i.i.d. from pi (``balanced`` must be ``False``) and the
        Bayes predictor's posterior uses pi as its prior. Beyond the paper: page 09's rare
        regimes (:func:`zipf_weights`).
    info:
        Model-specific facts (e.g. ``rho_K``, ``sigma_K`` of the mixed-link model).
    """

    name: str
    means: torch.Tensor
    directions: torch.Tensor
    cov_diag: torch.Tensor
    links: tuple[Link, ...]
    noise_std: float
    balanced: bool = False
    weights: torch.Tensor | None = None
    info: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        K, d = self.means.shape
        if self.directions.shape != (K, d):
            raise ValueError(f"directions must have shape {(K, d)}, got {tuple(self.directions.shape)}")
        if self.cov_diag.shape != (d,) or bool((self.cov_diag < 0).any()):
            raise ValueError(f"cov_diag must be a non-negative vector of length {d}")
        if len(self.links) != K:
            raise ValueError(f"need one link per cluster ({K}), got {len(self.links)}")
        norms = self.directions.norm(dim=1)
        if not torch.allclose(norms, torch.ones_like(norms), atol=1e-10):
            raise ValueError("predictive directions must be unit vectors")
        if not self.noise_std >= 0:
            raise ValueError(f"noise_std={self.noise_std!r} must be >= 0")
        if self.weights is not None:
            w = self.weights
            if (not isinstance(w, torch.Tensor) or w.shape != (K,) or not bool(torch.isfinite(w).all())
                    or bool((w <= 0).any()) or abs(float(w.double().sum()) - 1.0) > 1e-9):
                raise ValueError(f"weights must be a tensor of {K} positive cluster probabilities summing to 1")
            if self.balanced:
                raise ValueError("balanced=True draws every cluster equally often: it cannot be combined with weights")

    # ----------------------------------------------------------------------------- basic facts
    @property
    def K(self) -> int:
        """Number of clusters."""
        return int(self.means.shape[0])

    @property
    def d(self) -> int:
        """Ambient dimension."""
        return int(self.means.shape[1])

    @property
    def covariance(self) -> torch.Tensor:
        """The ``(d, d)`` covariance Sigma_c shared by all clusters."""
        return torch.diag(self.cov_diag)

    @property
    def link_names(self) -> tuple[str, ...]:
        return tuple(str(g) for g in self.links)

    @property
    def noise_variance(self) -> float:
        return self.noise_std**2

    def __repr__(self) -> str:
        return f"{self.name}(K={self.K}, d={self.d}, noise_std={self.noise_std:g})"

    # -------------------------------------------------------------------------------- sampling
    def sample(
        self,
        n: int,
        seed: int,
        *,
        balanced: bool | None = None,
        device: str | torch.device | None = None,
        dtype: torch.dtype | str | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Draw ``n`` examples: ``(x, y, c)`` with shapes ``(n, d)``, ``(n,)``, ``(n,)``.

        Deterministic in ``seed`` and identical on every device (random numbers are drawn on the
        CPU, the arithmetic runs on ``device``). The first ``n`` rows of ``sample(N, seed)`` equal
        ``sample(n, seed)`` for every ``N >= n``: the paper's nested training pools.
        ``c`` is a ``torch.long`` tensor of cluster indices in ``0..K-1``.
        """
        n = check_int(n, "n")
        dev = get_device(device)
        dt = resolve_dtype(dtype)
        balanced = self.balanced if balanced is None else bool(balanced)
        if balanced and self.weights is not None:
            raise ValueError("balanced=True draws every cluster equally often: this model has cluster weights")
        gen = torch_generator(seed)
        K, d = self.K, self.d
        rows = K * math.ceil(_CHUNK / K)  # a multiple of K, so balanced blocks never straddle chunks
        labels, z, eps = [], [], []
        for _ in range(math.ceil(n / rows)):
            if balanced:
                # each consecutive block of K rows is a random permutation of the K clusters, so
                # every prefix has counts that differ by at most one
                labels.append(torch.rand(rows // K, K, generator=gen, dtype=torch.float64).argsort(dim=1).reshape(-1))
            elif self.weights is not None:
                labels.append(torch.multinomial(self.weights.double(), rows, replacement=True, generator=gen))
            else:
                labels.append(torch.randint(K, (rows,), generator=gen))
            z.append(torch.randn(rows, d, generator=gen, dtype=torch.float64))
            eps.append(torch.randn(rows, generator=gen, dtype=torch.float64))
        c = torch.cat(labels)[:n].to(dev)
        z64 = torch.cat(z)[:n].to(dev)
        e64 = torch.cat(eps)[:n].to(dev)
        means, cov = self.means.to(dev), self.cov_diag.to(dev)
        x = means[c] + z64 * cov.sqrt()
        y = self._f_star64(x, c) + self.noise_std * e64
        return x.to(dt), y.to(dt), c

    def with_weights(self, weights: torch.Tensor | None) -> "ClusteredSingleIndexModel":
        """The same clusters, directions and links under other cluster probabilities (``None``:
        uniform and balanced, as the paper's models)."""
        return dataclasses.replace(self, weights=weights, balanced=weights is None,
                                   info=self.info | {"weights": None if weights is None else weights.tolist()})

    def pool(self, n: int, run: int = 0, **kwargs) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Training pool of run ``r`` (seed 12345 + r, Appendix A.2); nested in ``n``."""
        return self.sample(n, TRAIN_SEED_BASE + check_int(run, "run", 0), **kwargs)

    def test_set(self, n: int = 4096, run: int = 0, **kwargs) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Test set of run ``r`` (seed 54321 + r, 4 096 examples by default, Appendix A.2)."""
        return self.sample(n, TEST_SEED_BASE + check_int(run, "run", 0), **kwargs)

    # ------------------------------------------------------------------------ regression function
    def projections(self, x: torch.Tensor) -> torch.Tensor:
        """``(n, K)`` matrix of <x, v_c> for every cluster c."""
        x = self._check_x(x)
        return x.to(torch.float64) @ self.directions.to(x.device).T

    def f_star(self, x: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        """Noiseless regression function g_c(<x, v_c>) at inputs ``x`` of known clusters ``c``."""
        x = self._check_x(x)
        c = self._check_c(c, x)
        return self._f_star64(x.to(torch.float64), c).to(x.dtype)

    def _f_star64(self, x: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        t = (x * self.directions.to(x.device)[c]).sum(dim=1)
        out = torch.empty_like(t)
        for link, members in self._link_groups().items():
            mask = torch.isin(c, torch.as_tensor(members, device=c.device))
            out[mask] = link(t[mask])
        return out

    def local_predictions(self, x: torch.Tensor) -> torch.Tensor:
        """``(n, K)`` matrix of noiseless local predictions g_c(<x, v_c>) for every cluster c."""
        t = self.projections(x)
        out = torch.empty_like(t)
        for link, members in self._link_groups().items():
            out[:, members] = link(t[:, members])
        return out

    def _link_groups(self) -> dict[Link, list[int]]:
        groups: dict[Link, list[int]] = {}
        for k, link in enumerate(self.links):
            groups.setdefault(link, []).append(k)
        return groups

    def population_agop(self, n: int = 20_000, seed: int = 7) -> torch.Tensor:
        """Monte-Carlo estimate of the AGOP of the regression function, E[grad f*(x) grad f*(x)^T].

        The gradient is taken inside each point's true cluster (f* = g_c(<x, v_c>)), so the AGOP
        is (1/K) sum_c E[g_c'(<x, v_c>)^2] v_c v_c^T: the quantity of the paper's Lemma 12.
        ``(d, d)`` float64, from ``n`` fresh samples of seed ``seed`` (autograd, on the CPU).
        """
        x, _, c = self.sample(check_int(n, "n"), seed, device="cpu", dtype=torch.float64)
        x.requires_grad_(True)
        (grad,) = torch.autograd.grad(self._f_star64(x, c).sum(), x)
        return grad.T @ grad / n

    # ------------------------------------------------------------------------------ Bayes rule
    def log_posterior(self, x: torch.Tensor) -> torch.Tensor:
        """``(n, K)`` log posterior cluster probabilities log P(c | x) under the model's prior
        (uniform, or ``weights``).

        Computed in float64 in log space (a log-sum-exp normalization), so it is stable for
        well-separated clusters. Noiseless coordinates (zero variance) are handled as the limit of
        vanishing variance: only the clusters whose means are closest to x on those coordinates
        keep positive probability.
        """
        x = self._check_x(x).to(torch.float64)
        dev = x.device
        mu = self.means.to(dev)
        var = self.cov_diag.to(dev)
        noisy = var > 0
        # -||x - mu_c||^2_{Sigma^-1} / 2 up to a term constant in c
        mu_n = mu[:, noisy] / var[noisy]
        logits = x[:, noisy] @ mu_n.T - 0.5 * (mu[:, noisy] * mu_n).sum(dim=1)
        if bool((~noisy).any()):
            d0 = torch.cdist(x[:, ~noisy], mu[:, ~noisy]) ** 2
            best = d0.min(dim=1, keepdim=True).values
            logits = logits.masked_fill(d0 > best + 1e-9 * (1.0 + best), float("-inf"))
        if self.weights is not None:
            logits = logits + self.weights.to(dev, torch.float64).log()
        return logits - torch.logsumexp(logits, dim=1, keepdim=True)

    def posterior(self, x: torch.Tensor) -> torch.Tensor:
        """``(n, K)`` posterior cluster probabilities P(c | x)."""
        return self.log_posterior(x).exp()

    def bayes(self, x: torch.Tensor) -> torch.Tensor:
        """The Bayes predictor E[y | x] = sum_c P(c | x) g_c(<x, v_c>) (Appendix A.2).

        Returned in the dtype of ``x``; computed in float64.
        """
        post = self.posterior(x)
        return (post * self.local_predictions(x)).sum(dim=1).to(x.dtype)

    def bayes_risk(self, n: int, seed: int, *, device: str | torch.device | None = None) -> tuple[float, float]:
        """Monte-Carlo estimate of the Bayes risk E[(bayes(x) - y)^2] and its standard error."""
        x, y, _ = self.sample(n, seed, device=device, dtype=torch.float64)
        sq = (self.bayes(x) - y) ** 2
        return float(sq.mean()), float(sq.std() / math.sqrt(n))

    # ---------------------------------------------------------------------------- validation
    def _check_x(self, x: torch.Tensor) -> torch.Tensor:
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
        if not x.is_floating_point():
            raise ValueError(f"x must be a floating-point tensor, got dtype {x.dtype}")
        if x.ndim != 2 or x.shape[1] != self.d:
            raise ValueError(f"x must have shape (n, {self.d}), got {tuple(x.shape)}")
        return x

    def _check_c(self, c: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        c = torch.as_tensor(c, device=x.device)
        if c.dtype not in (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8):
            raise ValueError(f"c must be an integer tensor of cluster indices, got dtype {c.dtype}")
        if c.shape != (x.shape[0],):
            raise ValueError(f"c must have shape ({x.shape[0]},) to match x, got {tuple(c.shape)}")
        if c.numel() and (int(c.min()) < 0 or int(c.max()) >= self.K):
            raise ValueError(f"cluster indices c must lie in 0..{self.K - 1}")
        return c.long()


# ----------------------------------------------------------------------------------- helpers
def farthest_point_directions(K: int, dim: int, n_candidates: int, seed: int) -> torch.Tensor:
    """K unit vectors chosen by the farthest-point rule of Appendix A.2.

    Draw ``n_candidates`` Gaussian vectors in R^dim and normalize them; pick the first uniformly at
    random; pick each next one to minimize its largest inner product with those already chosen.
    Returns a ``(K, dim)`` float64 tensor.
    """
    K = check_int(K, "K")
    dim = check_int(dim, "dim")
    n_candidates = check_int(n_candidates, "n_candidates")
    if n_candidates < K:
        raise ValueError(f"n_candidates={n_candidates} must be >= K={K}")
    gen = torch_generator(seed)
    cand = torch.randn(n_candidates, dim, generator=gen, dtype=torch.float64)
    cand = cand / cand.norm(dim=1, keepdim=True)
    first = int(torch.randint(n_candidates, (1,), generator=gen))
    chosen = [first]
    largest = cand @ cand[first]  # largest inner product of each candidate with the chosen set
    for _ in range(1, K):
        nxt = int(torch.argmin(largest))
        chosen.append(nxt)
        largest = torch.maximum(largest, cand @ cand[nxt])
    return cand[chosen]


def _unit_basis(K: int, d: int, offset: int, scale: float = 1.0) -> torch.Tensor:
    out = torch.zeros(K, d, dtype=torch.float64)
    out[torch.arange(K), offset + torch.arange(K)] = scale
    return out


# -------------------------------------------------------------------------------- the models
def figure1_model() -> ClusteredSingleIndexModel:
    """The Figure 1 model of Section 3.1 / Appendix A.1.

    K = 10 clusters in d = 40: mu_c = 20 e_c (coordinates 1:10 encode the cluster),
    v_c = e_{K+c} (coordinates 11:20 are predictive, 21:40 nuisance), Sigma = I_d / d, and
    y = He2(sqrt(d) <v_c, x>) / sqrt(2) + N(0, 0.005^2). Clusters are drawn i.i.d. uniform.
    """
    K, d = 10, 40
    return ClusteredSingleIndexModel(
        name="figure1_model",
        means=_unit_basis(K, d, 0, 20.0),
        directions=_unit_basis(K, d, K),
        cov_diag=torch.full((d,), 1.0 / d, dtype=torch.float64),
        links=tuple(Link("he2", math.sqrt(d)) for _ in range(K)),
        noise_std=0.005,
        balanced=False,
        info={"blocks": {"routing": (0, K), "predictive": (K, 2 * K), "nuisance": (2 * K, d)}},
    )


#: the angles page 10 drifts the predictive directions by (:func:`drifted_model`), in degrees
DRIFT_ANGLES = (30.0, 60.0, 90.0)


def drifted_model(model: ClusteredSingleIndexModel, angle: float) -> ClusteredSingleIndexModel:
    """Beyond the paper (page 09, drift): the same mixture (means, covariance, links, noise) with
    every predictive direction rotated by ``angle`` degrees toward a fresh coordinate,

        v'_c = cos(angle) v_c + sin(angle) e_{2K+c},

    where coordinates 2K..3K-1 are nuisance coordinates no cluster reads (:func:`figure1_model`:
    d = 40, K = 10). At 90 degrees every cluster reads a coordinate it never read before. A sample
    of the same seed has the same x and c and the new y."""
    K, d = model.K, model.d
    if not (isinstance(angle, (int, float)) and math.isfinite(angle)):
        raise ValueError(f"angle={angle!r} must be a finite number of degrees")
    if d < 3 * K or bool(model.directions[:, 2 * K:3 * K].abs().gt(0).any()) or bool(model.means[:, 2 * K:3 * K].abs().gt(0).any()):
        raise ValueError(f"drifted_model needs coordinates {2 * K}..{3 * K - 1} unused by the means and directions (d >= 3K)")
    t = math.radians(float(angle))
    fresh = _unit_basis(K, d, 2 * K)
    return dataclasses.replace(model, directions=math.cos(t) * model.directions + math.sin(t) * fresh,
                               info=model.info | {"drift_angle": float(angle)})


def zipf_weights(K: int, exponent: float) -> torch.Tensor:
    """Cluster probabilities from a Zipf law, pi_c proportional to (c + 1)^-exponent, c = 0..K-1
    (float64; exponent 0 is uniform). Beyond the paper: page 09's rare regimes."""
    K = check_int(K, "K")
    if not (isinstance(exponent, (int, float)) and math.isfinite(exponent) and exponent >= 0):
        raise ValueError(f"exponent={exponent!r} must be a finite number >= 0")
    w = torch.arange(1, K + 1, dtype=torch.float64) ** -float(exponent)
    return w / w.sum()


#: the most clusters :func:`mixed_link_model` places: its farthest-point search costs K steps over
#: 500 K candidates (K = 1000 takes about half a minute on one core and 40 MB; 20 000 would take
#: hours and 800 MB), and the clusters' spread sigma_K = R (1 - rho_K) / (2 gamma) shrinks as
#: rho_K grows (rho_K = 0.74 at K = 1000). The paper's largest K is 50.
MAX_MIXED_LINK_K = 1000


def mixed_link_model(
    K: int,
    run: int = 0,
    *,
    R: float = 1.0,
    gamma: float = 4.0,
    noise_std: float = MIXED_LINK_NOISE_STD,
    geometry_seed: int | None = None,
    zipf: float = 0.0,
) -> ClusteredSingleIndexModel:
    """The mixed-link clustered model of Sections 3.2-3.3 / Appendices A.2-A.3.

    d = 20 = 10 routing + 10 predictive coordinates. Cluster-position directions s_c are chosen by
    :func:`farthest_point_directions` from L_K = max(20 000, 500 K) random unit vectors in R^10;
    rho_K = max_{c != c'} <s_c, s_c'> (rho_1 = 0); mu_c = [R s_c; 0] (mu_1 = 0 when K = 1);
    sigma_K = R (1 - rho_K) / (2 gamma) with gamma = 4 (eq. 3); Sigma = diag(sigma_K^2 I_10, I_10);
    v_c = [0; v~_c] with v~_c uniform on S^9. Links are drawn uniformly with replacement from
    {(t^2-1)/sqrt(2), sin, tanh} (eq. 5); noise N(0, 0.02^2) (eq. 6). Finite samples are
    balanced.

    Seeding (Appendix A.2): the geometry (s_c, v_c) is fixed per K -- the paper does not give its
    seed; ours is ``2026 + K`` unless ``geometry_seed`` is given -- and run r draws the links with
    seed 1000 + r. Use :meth:`~ClusteredSingleIndexModel.pool` (seed 12345 + r) and
    :meth:`~ClusteredSingleIndexModel.test_set` (seed 54321 + r) for the paper's data sets.

    ``zipf`` (beyond the paper, page 09): cluster probabilities :func:`zipf_weights` with this
    exponent (0, the default, is the paper's uniform and balanced mixture); the geometry and
    links do not depend on it.
    """
    K, run, R, gamma, geometry_seed = _checked_mixed_link(K, run, R, gamma, noise_std, geometry_seed)
    n_candidates = max(20_000, 500 * K)
    s, v_tilde, rho, means = _mixed_link_geometry(K, R, n_candidates, geometry_seed)
    sigma = R * (1.0 - rho) / (2.0 * gamma)
    weights = zipf_weights(K, zipf) if zipf != 0 else None
    link_idx = torch.randint(len(MIXED_LINKS), (K,), generator=torch_generator(model_seed(run)))
    links = tuple(Link(MIXED_LINKS[int(i)]) for i in link_idx)
    return ClusteredSingleIndexModel(
        name="mixed_link_model",
        means=means,
        directions=torch.cat([torch.zeros(K, 10, dtype=torch.float64), v_tilde], dim=1),
        cov_diag=torch.cat([torch.full((10,), sigma**2, dtype=torch.float64), torch.ones(10, dtype=torch.float64)]),
        links=links,
        noise_std=float(noise_std),
        balanced=weights is None,
        weights=weights,
        info={
            "zipf": float(zipf),
            "run": run,
            "R": R,
            "gamma": gamma,
            "rho_K": rho,
            "sigma_K": sigma,
            "centers": s,
            "n_candidates": n_candidates,
            "geometry_seed": geometry_seed,
            "link_seed": model_seed(run),
            "blocks": {"routing": (0, 10), "predictive": (10, 20)},
        },
    )


def _checked_mixed_link(K, run, R, gamma, noise_std, geometry_seed) -> tuple[int, int, float, float, int]:
    """:func:`mixed_link_model`'s arguments checked: K, run, R, gamma and the geometry seed (the
    default ``2026 + K`` when None)."""
    K = check_int(K, "K", 1, MAX_MIXED_LINK_K, what="the farthest-point search of the geometry grows as K squared")
    run = check_int(run, "run", 0)
    R = check_positive(R, "R")
    gamma = check_positive(gamma, "gamma")
    if not (isinstance(noise_std, (int, float)) and noise_std >= 0):
        raise ValueError(f"noise_std={noise_std!r} must be >= 0")
    geometry_seed = GEOMETRY_SEED_BASE + K if geometry_seed is None else check_int(geometry_seed, "geometry_seed", 0)
    return K, run, R, gamma, geometry_seed


def _mixed_link_geometry(K: int, R: float, n_candidates: int, geometry_seed: int) -> tuple[torch.Tensor, torch.Tensor, float, torch.Tensor]:
    """The mixed-link model's geometry: the cluster-position directions s_c, the predictive
    directions v~_c, rho_K (0 for one cluster) and the means mu_c."""
    s = farthest_point_directions(K, 10, n_candidates, geometry_seed)
    gen = torch_generator(geometry_seed + 10_000_000)  # a stream separate from the centers'
    v_tilde = torch.randn(K, 10, generator=gen, dtype=torch.float64)
    v_tilde = v_tilde / v_tilde.norm(dim=1, keepdim=True)
    if K > 1:
        gram = s @ s.T
        rho = float(gram.masked_fill(torch.eye(K, dtype=torch.bool), float("-inf")).max())
        means = torch.cat([R * s, torch.zeros(K, 10, dtype=torch.float64)], dim=1)
    else:
        rho = 0.0
        means = torch.zeros(1, 20, dtype=torch.float64)
    return s, v_tilde, rho, means


def symmetric_mixture(K: int, R: float) -> ClusteredSingleIndexModel:
    """The symmetric K-cluster mixture of Section 4.1 (Theorem 1).

    d = 2K, mu_c = R e_c, v_c = e_{K+c}, Sigma = I_d, y = h3(<x, v_c>) with
    h3(t) = (t^3 - 3t)/sqrt(6); no label noise. Clusters are drawn i.i.d. uniform.
    """
    K = check_int(K, "K")
    R = check_positive(R, "R")
    d = 2 * K
    return ClusteredSingleIndexModel(
        name="symmetric_mixture",
        means=_unit_basis(K, d, 0, R),
        directions=_unit_basis(K, d, K),
        cov_diag=torch.ones(d, dtype=torch.float64),
        links=tuple(Link("he3") for _ in range(K)),
        noise_std=0.0,
        balanced=False,
        info={"R": R, "blocks": {"routing": (0, K), "predictive": (K, d)}},
    )


def noiseless_routing_mixture(K: int, R: float = 1.0) -> ClusteredSingleIndexModel:
    """The Gaussian mixture with noiseless routing of Section 4.2 (Theorem 2).

    d = 2K, mu_c = [R e_c; 0], v_c = [0; e_c], Sigma = diag(0_K, I_K) (the routing block reveals
    the cluster exactly), clipped-ramp link g(t) = t_+ - (t - 1)_+, no label noise. Clusters are
    drawn i.i.d. uniform.
    """
    K = check_int(K, "K")
    R = check_positive(R, "R")
    d = 2 * K
    return ClusteredSingleIndexModel(
        name="noiseless_routing_mixture",
        means=_unit_basis(K, d, 0, R),
        directions=_unit_basis(K, d, K),
        cov_diag=torch.cat([torch.zeros(K, dtype=torch.float64), torch.ones(K, dtype=torch.float64)]),
        links=tuple(Link("ramp") for _ in range(K)),
        noise_std=0.0,
        balanced=False,
        info={"R": R, "blocks": {"routing": (0, K), "predictive": (K, d)}},
    )

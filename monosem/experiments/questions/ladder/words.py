"""The ladder in the page's words: its design (:func:`ladder_setup`), what it shows along each
network and on one run (:func:`ladder_reading`, :func:`run_reading`), what its gap is made of
(:func:`robust_reading`, :func:`oracle_failure_reading`), and every number page 04 quotes
(:func:`ladder_numbers`)."""

from __future__ import annotations

from typing import Any, Mapping

import pandas as pd

from ....profiles import Profile, get_profile
from ....tables import count, percent, plural, span, thousands
from ...cache import Job
from ...families.networks import MLP_REGLU
from ...sweeps import method_spec
from ...verdicts import MIN_RUNS, Comparison, verdict_label
from ..sample_efficiency import ORACLE_FACTOR
from .analysis import (ORACLE_FAIL_FACTOR, _absent_networks, rung_records, gap_by_link, gap_frame, gap_robust, ladder_frame,
                       oracle_failures, rung_verdicts, under_trained)
from .cells import KNOBS, LadderSizes, Rung, _max_steps, ladder_jobs, ladder_sizes

__all__ = ["ladder_setup", "ladder_reading", "run_reading", "robust_reading", "oracle_failure_reading", "gap_robust_words", "ladder_numbers"]

_NAMES = {"reglu": "ReGLU", "relu": "ReLU"}


def ladder_setup(profile: str | Profile = "long") -> dict[str, str]:
    """The ladder's design in words, from its declaration (for the page's prose): its rungs knob
    by knob, its Ks, the units per cluster of its first and last networks at the question's K,
    the update cap and the runs."""
    sizes = ladder_sizes(profile)
    first, paper = sizes.rungs[0], next(r for r in sizes.rungs if r.knob == "batch")
    widths = [r for r in sizes.rungs if r.knob in ("start", "width")]
    ns = [r.n for r in sizes.rungs if r.knob == "n"]
    K, control = sizes.Ks[0], sizes.Ks[-1]
    net = method_spec(MLP_REGLU, get_profile(profile), (first.width, first.batch))
    return {"ld_K": str(K), "ld_K_control": str(control),
            "ld_units_first": f"{first.width / K:.0f}", "ld_units_paper": f"{paper.width / K:.0f}",
            "ld_batch_share": f"{first.batch / paper.batch:.2g}",
            "ld_width_path": " \u2192 ".join(thousands(r.width) for r in widths), "ld_batch_first": thousands(first.batch),
            "ld_batch_paper": thousands(paper.batch), "ld_width_paper": thousands(paper.width), "ld_n_first": thousands(first.n),
            "ld_ns_more": " and ".join(thousands(n) for n in ns), "ld_min_steps": thousands(net.min_steps), "ld_max_steps": thousands(net.max_steps),
            "ld_oracle_runs": str(sizes.oracle_runs), "ld_paper_runs": str(paper.runs), "ld_first_runs": str(first.runs),
            "ld_more_runs": " and ".join(f"{thousands(r.width)} \u00d7 {thousands(r.batch)}" for r in sizes.rungs[1:] if r.runs > 1),
            "ld_control_runs": _control_runs(sizes)}


def _control_runs(sizes: LadderSizes) -> str:
    """The runs above the foot at the control K, in words."""
    runs = sorted({sizes.runs(r, sizes.Ks[-1]) for r in sizes.rungs[1:]})
    return " or ".join(str(r) for r in runs) + " " + plural("run", runs[-1])


def _control_words(frame: pd.DataFrame, sizes: LadderSizes) -> str:
    """Whether the control K is one where the foot's networks already come within finding 1b's
    factor of the better oracle, with every network's ratio of means and runs."""
    K = sizes.Ks[-1]
    foot = frame[(frame["K"] == K) & (frame["rung"] == 0)] if not frame.empty else frame
    if K == sizes.Ks[0]:
        return "no control: this ladder has one K"
    if foot.empty:
        return "the control (not recorded yet at this profile's network)"
    ratios = "; ".join(f"{_NAMES[r['network']]} {r['MLP / oracle']:.2f}\u00d7 over {count(r['runs'], 'run')}"
                       for _, r in foot.iterrows())
    within = bool((foot["MLP / oracle"] <= ORACLE_FACTOR).all())
    return (f"the control, where this profile's networks {'are' if within else 'are not all'} within finding 1b's "
            f"{ORACLE_FACTOR:g}\u00d7 of the better oracle on the means ({ratios})")


def _rung_words(rung: Rung) -> str:
    return rung.label


def _ratio_words(row: pd.Series | None) -> str:
    if row is None:
        return "not recorded yet"
    return f"{row['MLP / oracle']:.1f}\u00d7 ({count(row['runs'], 'run')})"


def ladder_reading(frame: pd.DataFrame, sizes: LadderSizes, K: int) -> str:
    """What the ladder shows at ``K``, read along each network (like with like: the same network
    on every rung): for every knob, the network's MLP / oracle from the rung before the knob
    moves to each rung it reaches, with its runs; the updates at which the networks stopped where
    the batch moves (a larger batch changes how many updates reach the target); the lowest ratio
    so far; and, where a rung has fewer runs than the verdict rule needs, that its numbers show a
    direction only."""
    at_K = frame[frame["K"] == K] if not frame.empty else frame
    if at_K.empty:
        return "no ladder network is recorded yet at this K"

    def row(network: str, i: int) -> pd.Series | None:
        hit = at_K[(at_K["network"] == network) & (at_K["rung"] == i)]
        return None if hit.empty else hit.iloc[0]

    sentences = []
    for network, name in _NAMES.items():
        rungs = [i for i, r in enumerate(sizes.rungs) if f"mlp-{network}" in r.networks]
        if all(row(network, i) is None for i in rungs):
            continue
        if network == "relu":  # ReLU's rungs are not neighbours: its own path, foot to the paper's network
            sentences.append(f"{name}: " + " \u2192 ".join(f"{_ratio_words(row(network, i))} at {_rung_words(sizes.rungs[i])}"
                                                           for i in rungs))
            continue
        parts = []
        for knob in KNOBS[1:]:
            moved = [i for i in rungs if sizes.rungs[i].knob == knob]
            if not moved:
                continue
            before = max((i for i in rungs if i < moved[0]), default=None)
            path = ([] if before is None else [before]) + moved
            labels = " \u2192 ".join(thousands(getattr(sizes.rungs[i], knob)) for i in path)
            values = " \u2192 ".join(_ratio_words(row(network, i)) for i in path)
            parts.append(f"{knob} {labels}: {values}")
        sentences.append(f"{name}: " + "; ".join(parts))
    text = "Along each network, its MLP / oracle as one knob moves: " + ". ".join(sentences) + "."
    batch = [i for i, r in enumerate(sizes.rungs) if r.knob == "batch"]
    if batch and (here := row("reglu", batch[0])) is not None and (there := row("reglu", batch[0] - 1)) is not None:
        text += (f" Where the batch grows to {thousands(int(here['batch']))}, the ReGLU network stops after {thousands(int(here['updates']))} "
                 f"updates (median; {int(here['stopped: target'])} of {int(here['runs'])} at the training target), against "
                 f"{thousands(int(there['updates']))} at batch {thousands(int(there['batch']))} "
                 f"({int(there['stopped: target'])} of {int(there['runs'])} at the target).")
    best = at_K.loc[at_K["MLP / oracle"].idxmin()]
    text += (f" The lowest so far: {_NAMES[best['network']]} at {_rung_words(sizes.rungs[int(best['rung'])])}, {_ratio_words(best)}, against "
             f"finding 1b's {ORACLE_FACTOR:g}\u00d7.")
    few = {int(r["rung"]) for _, r in at_K.iterrows() if r["runs"] < MIN_RUNS}
    if few:
        text += (f" {len(few)} of the recorded rungs have fewer than {MIN_RUNS} runs: their numbers show a direction on "
                 "those runs, not a verdict, and no cause of a change is tested beyond the knob that moved.")
    return text


def run_reading(records: Mapping[Job, Mapping[str, Any]], profile: str | Profile, K: int, run: int = 0) -> str:
    """The ladder at ``K`` on one run alone (like with like where the rungs have different runs:
    every rung has run 0): along each network, its MLP_r / oracle_r on that run, rung by rung, as
    :func:`rung_verdicts` pairs them, and the rungs where that run is within finding 1b's factor."""
    sentences, within = [], []
    for network, name in _NAMES.items():
        paired = [(rung, dict(c.ratios)) for rung, c in rung_verdicts(records, profile, K, network=f"mlp-{network}")]
        on_run = [(rung, ratios[run]) for rung, ratios in paired if run in ratios]
        if not on_run:
            continue
        sentences.append(f"{name} " + " \u2192 ".join(f"{x:.2f}\u00d7 at {rung.label}" for rung, x in on_run))
        within += [f"{name} at {rung.label} ({x:.2f}\u00d7)" for rung, x in on_run if x <= ORACLE_FACTOR]
    if not sentences:
        return f"no ladder network has run {run} recorded yet at this K"
    return (f"On run {run} alone, the same run on every rung that has it (like with like): " + "; ".join(sentences)
            + f". Within finding 1b's {ORACLE_FACTOR:g}\u00d7 on that run: " + ("; ".join(within) if within else "none") + ".")


def oracle_failure_reading(failures: pd.DataFrame, factor: float = ORACLE_FAIL_FACTOR) -> str:
    """:func:`oracle_failures` in words: at every n, on how many (cluster, run) pairs of each link
    the oracle fails and what share of its squared error those carry."""
    if failures.empty:
        return "not recorded yet"
    parts = []
    for n, g in failures.groupby("n", sort=True):
        where = f"at n = {thousands(int(n))} ({count(g['runs'].max(), 'run')})"
        if g["oracle fails"].sum() == 0:
            parts.append(f"{where} on none of its {int(g['(cluster, run) pairs'].sum())} clusters")
            continue
        links = [f"{int(r['oracle fails'])} of {int(r['(cluster, run) pairs'])} {r['link']}" for _, r in g.iterrows()]
        share = g["share of the oracle's error on failed clusters"].sum()
        parts.append(f"{where} on {', '.join(links[:-1])} and {links[-1]} clusters, which carry {percent(share)} of "
                     "its squared error there")
    return (f"the better oracle fails (its test MSE on a cluster more than {factor:g}\u00d7 the median of that link's "
            "clusters, counted run by run) " + "; ".join(parts))


def robust_reading(robust: pd.DataFrame, sizes: LadderSizes, network: str = "reglu") -> str:
    """The ladder read cluster by cluster (:func:`gap_robust` at one K): ``network``'s median
    per-cluster MLP / oracle on every rung where it is scored, beside its ratio of means; the
    rungs where one cluster carries most of the oracle's squared error, and how far below the
    median's ratio that puts the ratio of means there; and the lowest median."""
    mine = robust[robust["network"] == network] if not robust.empty else robust
    rows = []
    for rung in sizes.rungs:
        hit = mine[(mine["width"] == rung.width) & (mine["batch"] == rung.batch) & (mine["n"] == rung.n)] if not mine.empty else mine
        if not hit.empty:
            rows.append((rung, hit.iloc[0]))
    if not rows:
        return "not recorded yet"

    name = _NAMES.get(network, network)
    text = (f"Cluster by cluster, rung by rung, {name}'s median cluster against its ratio of means: "
            + "; ".join(f"{rung.label}: {r['median per-cluster ratio']:.3g}\u00d7 against {r['ratio of means']:.3g}\u00d7 "
                        f"({count(r['runs'], 'run')})" for rung, r in rows) + ".")
    one = [(rung, r) for rung, r in rows if r["runs with one cluster carrying most of the oracle's error"] > 0]
    if one:
        clusters = sorted({r["oracle's worst cluster"] for _, r in one})
        shares = span([100 * r["its share of its run's oracle error"] for _, r in one], ".0f", " %")
        runs = span([r["runs with one cluster carrying most of the oracle's error"] for _, r in one])
        below = span([r["median per-cluster ratio"] / r["ratio of means"] for _, r in one], ".2g", "\u00d7")
        text += (f" On {len(one)} of these {len(rows)} rungs one cluster carries most of a run's oracle squared error, in {runs} "
                 f"of the rung's runs (the largest share per rung {shares}; cluster {', '.join(clusters)}), and the ratio of "
                 f"means there is {below} below the median cluster's ratio: it measures the oracle's failure on those clusters "
                 "as much as the MLP.")
    rung, best = min(rows, key=lambda x: x[1]["median per-cluster ratio"])
    text += f" The lowest median: {best['median per-cluster ratio']:.3g}\u00d7 at {rung.label} ({count(best['runs'], 'run')})."
    return text


def _chosen_on(records: Mapping[Job, Mapping[str, Any]], frame: pd.DataFrame, sizes: LadderSizes, rung: Rung, K: int,
               best: str) -> str:
    """Where a rung's networks have different runs, which runs chose its best MLP (:func:`best_of`
    ranks them on the runs they share) and the other network's ratio over its own runs; empty
    where they have the same runs."""
    runs = {m: {j.run for j in rung_records(records, sizes, rung, K) if j.method == m} for m in rung.networks}
    runs = {m: r for m, r in runs.items() if r}
    if len(runs) < 2 or len({frozenset(r) for r in runs.values()}) == 1:
        return ""
    shared = set.intersection(*runs.values())
    i = sizes.rungs.index(rung)
    others = []
    for m in runs:
        row = frame[(frame["K"] == K) & (frame["rung"] == i) & (frame["network"] == m.removeprefix("mlp-"))]
        if m != best and not row.empty:
            others.append(f"{m.removeprefix('mlp-')} is {row['MLP / oracle'].iloc[0]:.2f}\u00d7 over its own "
                          f"{count(int(row['runs'].iloc[0]), 'run')}")
    chosen = f"the {count(len(shared), 'run')} both networks share" if shared else "each network's own runs (they share none)"
    return f" (the better MLP, {best.removeprefix('mlp-')}, is chosen on {chosen}; " + "; ".join(others) + ")"


def _scale(rung: Rung, runs: int) -> str:
    return f"width {thousands(rung.width)}, batch {thousands(rung.batch)}, n = {thousands(rung.n)}, {count(runs, 'run')}"


def ladder_numbers(records: Mapping[Job, Mapping[str, Any]], gaps: Mapping[Job, Mapping[str, Any]],
                   profile: str | Profile = "long") -> dict[str, str]:
    """The numbers and sentences page 04 quotes from the ladder, every one computed from the
    records: how many cells are recorded, the best MLP's ratio to the oracle on every rung at the
    question's K (with its runs and how many of them stopped at the cap), finding 1b's verdict on
    the paper's network with its scale, whether the cap binds, and what the gap is made of."""
    sizes = ladder_sizes(profile)
    declared = ladder_jobs(get_profile(profile))
    out = {"ld_recorded": f"{sum(j in records for j in declared)} of {len(declared)}", "ld_factor": f"{ORACLE_FACTOR:g}"}
    K = sizes.Ks[0]
    frame = ladder_frame(records, profile)
    verdicts = dict(rung_verdicts(records, profile, K))
    out["ld_steps"] = _steps_words(records, frame, sizes, verdicts, K)
    out["ld_control"] = _control_words(frame, sizes)
    out["ld_reading"] = ladder_reading(frame, sizes, K)
    out["ld_run_reading"] = run_reading(records, profile, K)
    if sizes.Ks[-1] != K:
        out["ld_control_reading"] = ladder_reading(frame, sizes, sizes.Ks[-1])
        out["ld_control_run_reading"] = run_reading(records, profile, sizes.Ks[-1])
    out |= _paper_verdict_words(records, frame, sizes, verdicts, K)
    out["ld_paper_cap"] = _paper_cap_words(frame, sizes, K, profile)
    out["ld_cap"] = _cap_words(frame, sizes, K)
    return out | _gap_words(gaps, sizes, K)


def _paper_rung(sizes: LadderSizes) -> Rung:
    """The rung of the paper's network at the ladder's first n (the batch step)."""
    return next(r for r in sizes.rungs if r.knob == "batch")


def _steps_words(records: Mapping[Job, Mapping[str, Any]], frame: pd.DataFrame, sizes: LadderSizes,
                 verdicts: Mapping[Rung, Comparison], K: int) -> str:
    """Every rung's best MLP / oracle at ``K`` (its network, runs, and those at the update cap)."""
    steps = []
    for i, rung in enumerate(sizes.rungs):
        c = verdicts.get(rung)
        if c is None:
            steps.append(f"{rung.label}: not recorded yet")
            continue
        rows = frame[(frame["K"] == K) & (frame["rung"] == i) & (frame["network"] == c.a.removeprefix("mlp-"))]
        capped = int(rows["stopped: cap"].sum())
        absent = _absent_networks(records, sizes, rung, K)
        steps.append(f"{rung.label}: {c.mean_ratio:.1f}\u00d7 ({c.a.removeprefix('mlp-')}, {count(c.runs, 'run')}, "
                     f"{capped} at the update cap" + (f"; {absent} not recorded yet" if absent else "") + ")")
    return "; ".join(steps)


def _paper_verdict_words(records: Mapping[Job, Mapping[str, Any]], frame: pd.DataFrame, sizes: LadderSizes,
                         verdicts: Mapping[Rung, Comparison], K: int) -> dict[str, str]:
    """Finding 1b on the paper's network at ``K``: its scale (``ld_paper_scale``) and its verdict
    (``ld_paper_verdict``), with which runs chose its best MLP (:func:`_chosen_on`)."""
    paper = _paper_rung(sizes)
    c = verdicts.get(paper)
    out = {"ld_paper_scale": _scale(paper, c.runs if c else 0)}
    absent = _absent_networks(records, sizes, paper, K)
    if c is None:
        out["ld_paper_verdict"] = "not computed: the paper's network is not recorded yet at this n"
    elif absent:
        out["ld_paper_verdict"] = (f"{verdict_label(c.status, c.runs)}: the best recorded MLP ({c.a.removeprefix('mlp-')}) is "
                                   f"{c.evidence} ({absent} not recorded yet on this rung: the verdict may change when it is)")
    else:
        out["ld_paper_verdict"] = f"{verdict_label(c.status, c.runs)}: the best MLP is {c.evidence}"
    if c is not None:
        out["ld_paper_verdict"] += _chosen_on(records, frame, sizes, paper, K, c.a)
    return out


def _paper_cap_words(frame: pd.DataFrame, sizes: LadderSizes, K: int, profile: str | Profile) -> str:
    """Whether A.2's own update cap binds on the paper's network, at each n of the ladder."""
    paper = _paper_rung(sizes)
    # every rung with the paper's width and batch: the paper's network at each n of the ladder
    paper_rungs = [i for i, r in enumerate(sizes.rungs) if (r.width, r.batch) == (paper.width, paper.batch)]
    at_paper = frame[(frame["K"] == K) & frame["rung"].isin(paper_rungs)] if not frame.empty else frame
    if at_paper.empty:
        return "whether A.2's own update cap binds on the paper's network is not known yet (not recorded)"
    per_n = [f"at n = {thousands(n)}, " + " and ".join(f"{int(r['stopped: cap'])} of {int(r['runs'])} {r['network']}"
                                               for _, r in rows.iterrows())
             for n, rows in at_paper.groupby("n", sort=True)]
    binding = [f"{r['network']} at n = {thousands(int(r['n']))}" for _, r in at_paper.iterrows() if r["stopped: cap"] > 0]
    return (f"on the paper's own network and protocol, the networks that stop at A.2's cap of "
            f"{thousands(_max_steps(profile))} updates: {'; '.join(per_n)}"
            + (f": the paper's cap binds ({', '.join(binding)}), a finding about the paper's protocol" if binding
               else ": the cap does not bind there"))


def _cap_words(frame: pd.DataFrame, sizes: LadderSizes, K: int) -> str:
    """The ladder's networks at ``K`` that stop at the update cap (under-trained by A.2's rule)."""
    capped_rows = frame[(frame["K"] == K) & under_trained(frame)] if not frame.empty else frame
    if capped_rows.empty:
        return "no recorded ladder network at this K stops at the update cap"
    parts = [f"{r['network']} {sizes.rungs[int(r['rung'])].label} ({int(r['stopped: cap'])} of {int(r['runs'])}, "
             f"training MSE {r['train MSE / target']:.1f}\u00d7 the target)" for _, r in capped_rows.iterrows()]
    return "the networks that stop at the update cap, under-trained by A.2's own rule: " + "; ".join(parts)


def _gap_words(gaps: Mapping[Job, Mapping[str, Any]], sizes: LadderSizes, K: int) -> dict[str, str]:
    """What the gap is made of at ``K``, from the gap cells: link by link on the highest rung scored
    (``ld_gap``), that rung cluster by cluster (``ld_gap_robust``), every rung so
    (``ld_gap_ladder``) and where the oracle fails (``ld_oracle_fail``)."""
    at_K = gap_frame({j: r for j, r in gaps.items() if j.K == K})
    by_link = gap_by_link(at_K)
    if by_link.empty:
        return dict.fromkeys(("ld_gap", "ld_gap_robust", "ld_gap_ladder", "ld_oracle_fail"), "not recorded yet")
    # the highest rung with gap cells, its ReGLU network (the better MLP) where it has one
    mine = by_link[by_link["network"] == "reglu"] if (by_link["network"] == "reglu").any() else by_link
    rung_key = mine[["width", "batch", "n"]].apply(tuple, axis=1)
    last = mine[rung_key == rung_key.max()]
    head = last.iloc[0]
    parts = [f"{r['link']}: {percent(r['share of the excess'])} of the excess, {r['MLP / oracle']:.1f}\u00d7 the oracle, "
             f"{r['units per cluster']:g} units per cluster ({r['specialized per cluster']:g} specialized)"
             for _, r in last.sort_values("share of the excess", ascending=False).iterrows()]
    robust = gap_robust(at_K)
    return {"ld_gap": (f"{head['network']} {thousands(int(head['width']))} \u00d7 {thousands(int(head['batch']))} at "
                       f"n = {thousands(int(head['n']))}, {count(last['runs'].max(), 'run')}: " + "; ".join(parts)),
            "ld_gap_robust": gap_robust_words(robust, head),
            "ld_gap_ladder": robust_reading(robust, sizes),
            "ld_oracle_fail": oracle_failure_reading(oracle_failures(at_K))}


def gap_robust_words(robust: pd.DataFrame, head: pd.Series) -> str:
    """The gap of ``head``'s network and rung (a row of :func:`gap_by_link`) cluster by cluster: its
    median cluster against its ratio of means, and the oracle's worst cluster (:func:`gap_robust`)."""
    r = robust[(robust["network"] == head["network"]) & (robust["width"] == head["width"])
               & (robust["batch"] == head["batch"]) & (robust["n"] == head["n"])].iloc[0]
    worst, share = r["oracle's worst cluster"], r["its share of its run's oracle error"]
    each = "each run's worst cluster" if r["runs"] > 1 else "it"
    without = r["ratio of means without each run's worst"]
    whose = "its run's" if r["runs"] > 1 else "its"
    return (
        f"the median cluster's MLP / oracle is {r['median per-cluster ratio']:.3g}\u00d7 (quartiles {r['quartiles']}), "
        f"against {r['ratio of means']:.3g}\u00d7 for the ratio of means; the MLP is below the oracle on "
        f"{r['clusters with MLP below oracle']} of {r['clusters']} clusters{'' if r['runs'] == 1 else ' (all runs)'}. "
        f"The oracle's worst cluster, {worst}, carries {percent(share)} of {whose} "
        f"squared error (oracle {r['oracle there']:.3g}, MLP {r['MLP there']:.3g}); without {each} the ratio of means "
        f"is {without:.3g}\u00d7")

"""The command line does not guess: a cache folder that does not exist, an export with nothing in
it, ``--help``, ``monosem profiles``; and the warning of a GPU profile without CUDA."""

from __future__ import annotations

import warnings

import pytest

import monosem.profiles as profiles
from monosem.__main__ import main, profiles_table
from monosem.experiments.sweeps import sweep
from monosem.profiles import PROFILE_NAMES

SMOKE = ["--profile", "smoke", "--methods", "bayes", "--K", "10"]


@pytest.mark.parametrize(
    "argv",
    [
        ["plot", "fig2"],
        ["export", "fig2"],
        ["record", "fig2"],
        ["export", "theorem1"],
    ],
)
def test_a_missing_cache_is_an_error_naming_it(tmp_path, capsys, argv):
    missing = tmp_path / "no" / "such" / "cache"
    assert main([*argv, "--profile", "smoke", "--cache", str(missing)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("monosem: error: ")
    assert f"cache folder {missing} does not exist (from --cache)" in err
    assert f"monosem run {argv[1]} --profile smoke" in err
    assert not missing.exists()  # reading never creates it


def test_a_missing_cache_named_by_the_environment_says_so(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MONOSEM_CACHE", str(tmp_path / "gone"))
    assert main(["plot", "fig2", "--profile", "smoke"]) == 1
    assert "(from $MONOSEM_CACHE)" in capsys.readouterr().err


def test_status_without_a_cache_reports_the_recorded_cells(tmp_path, capsys, monkeypatch):
    """The README's ``monosem status fig2 --profile long`` on a fresh clone: no cache folder yet
    is nothing cached, and the recorded cells are counted."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MONOSEM_CACHE", raising=False)
    assert main(["status", "fig2", "--profile", "long"]) == 0
    out = capsys.readouterr().out
    assert "results/cache (no such folder yet, from the default, results/cache)" in out
    from monosem.experiments.recorded import load_recorded_cells

    jobs = list(dict.fromkeys(sweep("fig2", "long")))
    recorded = len(load_recorded_cells(jobs, "long"))
    assert 0 < recorded <= len(jobs)
    assert f"0 of {len(jobs)} cells cached, {len(jobs)} missing; {recorded} recorded in the package" in out
    assert not (tmp_path / "results").exists()  # reading never creates it


@pytest.mark.parametrize("argv", [["status", "fig2"], ["run", "fig2"], ["readings"], ["study", "figure1"]])
def test_an_empty_cache_path_is_refused(tmp_path, capsys, monkeypatch, argv):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_:
        main([*argv, "--cache", ""])
    assert exit_.value.code == 2 and "argument --cache: the cache folder is empty" in capsys.readouterr().err
    monkeypatch.setenv("MONOSEM_CACHE", "")
    assert main([*argv] + (["--profile", "smoke"] if argv[0] != "study" else [])) == 1
    err = capsys.readouterr().err
    assert err == "monosem: error: MONOSEM_CACHE is set but empty; name a cache folder or unset it (default: results/cache)\n"
    assert list(tmp_path.iterdir()) == []  # nothing cached into the current folder


def test_a_read_only_cache_is_refused_before_computing(tmp_path, capsys, monkeypatch):
    import os
    import tempfile

    from monosem.experiments import figures

    frozen = tmp_path / "frozen"
    frozen.mkdir()
    frozen.chmod(0o555)
    if os.access(frozen, os.W_OK):  # root writes there anyway: stand in for a read-only file system
        def refused(*args, **kwargs):
            raise PermissionError(13, "Permission denied", str(frozen))

        monkeypatch.setattr(tempfile, "TemporaryFile", refused)
    monkeypatch.setattr(figures, "run_figure", lambda *a, **kw: pytest.fail("computed into a cache it cannot write"))
    try:
        assert main(["run", "fig2", *SMOKE, "--cache", str(frozen)]) == 1
    finally:
        frozen.chmod(0o755)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"cache folder {frozen} is not writable (from --cache: Permission denied)" in err


def test_repeated_list_options_accumulate(tmp_path, capsys, monkeypatch):
    from monosem.experiments import figures

    seen = {}
    monkeypatch.setattr(figures, "run_figure", lambda *a, **kw: seen.update(kw))
    argv = ["run", "fig2", "--profile", "smoke", "--cache", str(tmp_path), "--methods", "bayes", "--methods", "laplace", "bayes"]
    assert main([*argv, "--n", "500", "--n", "1000", "500", "--K", "10", "--K", "1", "--runs", "0", "--runs", "0"]) == 0
    assert (seen["ns"], seen["Ks"], seen["methods"], seen["runs"]) == ([500, 1000], [10, 1], ["bayes", "laplace"], [0])
    assert "all 8 cells" in capsys.readouterr().out


def test_slurm_off_a_cluster_is_one_line(tmp_path, capsys, monkeypatch):
    import shutil

    from monosem.experiments import figures

    pytest.importorskip("submitit")
    monkeypatch.setattr(shutil, "which", lambda tool: None)
    monkeypatch.setattr(figures, "run_figure", lambda *a, **kw: pytest.fail("computed without a cluster"))
    assert main(["run", "fig2", *SMOKE, "--cache", str(tmp_path / "c"), "--executor", "slurm"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--executor slurm: executor='slurm' needs a SLURM cluster, but sbatch and srun are not on PATH" in err
    assert not (tmp_path / "c").exists()  # refused before the cache is touched


def test_a_cache_that_is_a_file_is_an_error(tmp_path, capsys):
    file = tmp_path / "cache.txt"
    file.write_text("")
    assert main(["status", "fig2", "--profile", "smoke", "--cache", str(file)]) == 1
    assert "is not a folder" in capsys.readouterr().err


def test_run_and_restore_create_the_cache_and_say_so(tmp_path, capsys, monkeypatch):
    from monosem.experiments import figures, recorded

    monkeypatch.setattr(figures, "run_figure", lambda *a, **kw: None)  # nothing computed: the folder is the point
    fresh = tmp_path / "new" / "cache"
    assert main(["run", "fig2", *SMOKE, "--cache", str(fresh)]) == 0
    err = capsys.readouterr().err
    assert fresh.is_dir() and err.count("\n") == 1 and f"created the cache folder {fresh} (from --cache)" in err
    assert main(["run", "fig2", *SMOKE, "--cache", str(fresh)]) == 0
    assert "created" not in capsys.readouterr().err  # once

    monkeypatch.setattr(recorded, "restore_cells", lambda jobs, cache, profile: 0)
    other = tmp_path / "restored"
    assert main(["record", "fig2", "--profile", "long", "--restore", "--cache", str(other)]) == 0
    out, err = capsys.readouterr()
    assert other.is_dir() and f"created the cache folder {other}" in err and "restored into" in out


def test_an_empty_export_says_what_to_run_first(tmp_path, capsys):
    out = tmp_path / "fig2.csv"
    assert main(["export", "fig2", *SMOKE, "--cache", str(tmp_path), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nothing to export: no cached cell of fig2 at profile 'smoke'" in err
    assert f"monosem run fig2 --profile smoke --K 10 --methods bayes --cache {tmp_path}" in err
    assert not out.exists()  # no file holding only a header


def test_an_empty_recorded_export_points_to_the_recorded_profile(capsys):
    assert main(["export", "fig2", "--profile", "cpu", "--recorded"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no recorded cell of fig2 at profile 'cpu'" in err and "--profile long --recorded" in err


@pytest.mark.parametrize("argv", [["run", "--help"], ["export", "--help"], ["readings", "--help"], ["--help"]])
def test_help_shows_the_defaults(capsys, argv):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 0
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    assert "(default: None)" not in text and "(default: False)" not in text
    if argv[0] in ("run", "export"):
        assert "(default: cpu)" in text and "(default: $MONOSEM_CACHE, else results/cache)" in text
    if argv[0] == "run":
        assert "(default: 1)" in text and "(default: 240)" in text
    if argv[0] == "export":
        assert "(default: csv)" in text
    if argv[0] == "readings":
        assert "(default: cpu)" in text and "(default: the profile's)" in text


def test_profiles_prints_one_row_per_profile(capsys):
    table = profiles_table()
    assert list(table.index) == list(PROFILE_NAMES)
    assert {"Fig 1 width", "Fig 2/6 K", "Fig 2/6 n", "MLP width", "runs", "Fig 4 K"} <= set(table.columns)
    assert table.loc["paper", "Fig 2/6 n"] == "20\u202f000, 50\u202f000, 100\u202f000, 200\u202f000" and table.loc["long", "runs"] == 5
    assert main(["profiles"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["Fig", "1", "width"]  # a table, not dataclass reprs
    rows = [line for line in lines if line.split()[:1] and line.split()[0] in PROFILE_NAMES]
    assert [r.split()[0] for r in rows][:len(PROFILE_NAMES)] == list(PROFILE_NAMES)
    assert not any("Profile(" in line for line in lines)


@pytest.fixture
def fresh_warning(monkeypatch):
    """The once-per-process flag reset, and no CUDA."""
    monkeypatch.setattr(profiles, "_warned_without_cuda", False)
    monkeypatch.setattr(profiles.torch.cuda, "is_available", lambda: False)


@pytest.mark.parametrize("name", ["gpu", "paper"])
def test_gpu_profiles_warn_once_without_cuda(fresh_warning, name):
    with pytest.warns(RuntimeWarning, match=f"profile '{name}' is sized for a GPU, but CUDA is not available"):
        text = profiles.announce(name)
    assert text.startswith(f"profile {name!r}: ")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a second warning would raise
        profiles.announce(name)
        profiles.announce("paper")
        assert profiles.warn_without_cuda(name) == ""


@pytest.mark.parametrize("name", ["smoke", "cpu", "long"])
def test_cpu_profiles_do_not_warn(fresh_warning, name):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        profiles.announce(name)
    assert profiles.warn_without_cuda(name) == ""


def test_no_warning_with_cuda(monkeypatch):
    monkeypatch.setattr(profiles, "_warned_without_cuda", False)
    monkeypatch.setattr(profiles.torch.cuda, "is_available", lambda: True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert profiles.warn_without_cuda("gpu") == ""

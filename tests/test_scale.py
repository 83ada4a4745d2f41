"""Studies at scale: running aggregates against numpy on the whole sample, Sobol and Morris against
SALib (the oracle: same design, same indices), the same numbers bit for bit on 1 process and on a
2-process dask cluster, and interrupted or cancelled studies that say what completed and write nothing."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from SALib.analyze import morris as salib_morris_analyze
from SALib.analyze import sobol as salib_analyze
from SALib.sample import morris as salib_morris_sample
from SALib.sample import sobol as salib_sample

import tco
from tco.cli import main
from tco.studies import grid_map, monte_carlo, morris_analysis, parse_metric, sobol_analysis
from tco.studies import montecarlo as montecarlo_module
from tco.studies.aggregates import Histogram, Moments, quantile_edges
from tco.studies.montecarlo import MonteCarloJob, chunk_values, metric_cell
from tco.studies.parallel import ChunkRunner, StudyInterrupted, chunk_seed
from tco.studies.portfolio import portfolio, portfolio_cells
from tco.studies.sampling import sampling_plan
from tco.studies.sensitivity import elementary_effects, morris_delta, morris_statistics, morris_trajectories

DATA = Path(__file__).parent / "data"
METRICS = ["ratio:groq", "lcot:h100", "npv:h100-prefill+groq-decode"]

finite = st.floats(-1e6, 1e6, allow_nan=False)


def ishigami(u):
    """Ishigami & Homma (1990), a = 7, b = 0.1, on [-pi, pi]^3 mapped from the unit cube."""
    x = -np.pi + 2 * np.pi * u
    return np.sin(x[:, 0]) + 7 * np.sin(x[:, 1]) ** 2 + 0.1 * x[:, 2] ** 4 * np.sin(x[:, 0])


# --- running aggregates ---------------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(st.lists(finite, min_size=2, max_size=200), st.lists(st.integers(0, 200), max_size=6))
def test_moments_merged_in_pieces_equal_numpy_on_the_whole(values, cuts):
    v = np.array(values)
    pieces = np.split(v, sorted({c % len(v) for c in cuts}))
    merged = Moments()
    for piece in pieces:
        merged = merged.merge(Moments.of(piece))
    assert merged.count == len(v)
    assert merged.mean == pytest.approx(v.mean(), rel=1e-9, abs=1e-6)
    assert merged.variance == pytest.approx(v.var(ddof=1), rel=1e-7, abs=1e-3)
    assert (merged.minimum, merged.maximum) == (v.min(), v.max())


def test_moments_ignore_nan_and_chan_merge_by_hand():
    # {1, 2} and {4, 6, NaN}: n = 2 + 2, delta = 5 - 1.5 = 3.5, mean = 1.5 + 3.5 * 2/4 = 3.25,
    # M2 = 0.5 + 2 + 3.5^2 * 2 * 2 / 4 = 14.75 (= sum of squared deviations of 1, 2, 4, 6 from 3.25)
    m = Moments.of(np.array([1.0, 2.0])).merge(Moments.of(np.array([4.0, 6.0, np.nan])))
    assert (m.count, m.mean, m.m2) == (4, 3.25, 14.75)
    assert m.std_error == pytest.approx(np.sqrt(14.75 / 3 / 4))


@settings(max_examples=60, deadline=None)
@given(st.lists(finite, min_size=5, max_size=300), st.lists(finite, min_size=3, max_size=50),
       st.floats(0.01, 0.99))
def test_histogram_quantile_lies_in_the_bin_of_the_exact_quantile(values, pilot, q):
    """Edges fixed from a different (pilot) sample; the estimate may be off by at most that bin's width."""
    v = np.array(values)
    edges = quantile_edges(np.array(pilot), bins=16)
    half = len(v) // 2
    h = Histogram.of(v[:half], edges).merge(Histogram.of(v[half:], edges))
    assert h.counts.sum() == len(v)
    estimate = h.quantiles(np.array([q]), v.min(), v.max())[0]
    ordered = np.sort(v)
    # the q-quantile lies between the order statistics around rank q n; so does the estimate's bin
    lows = np.concatenate([[v.min()], edges])
    highs = np.concatenate([edges, [v.max()]])
    k = np.searchsorted(np.cumsum(h.counts), q * len(v), side="left")
    assert lows[k] - 1e-9 <= estimate <= highs[k] + 1e-9
    assert ordered[max(0, int(np.ceil(q * len(v))) - 1)] >= lows[k] - 1e-9 or k == 0


@settings(max_examples=60, deadline=None)
@given(st.lists(finite, min_size=1, max_size=300), st.lists(finite, min_size=1, max_size=40), st.integers(1, 5))
def test_histogram_cdf_counts_the_values_below_every_edge(values, pilot, pieces):
    """Merged in pieces, the CDF at each edge is the exact share of values below it; 0 at the minimum, 1 at the maximum."""
    v = np.array(values)
    edges = quantile_edges(np.array(pilot), bins=8)
    parts = [Histogram.of(piece, edges) for piece in np.array_split(v, pieces)]
    h = parts[0]
    for part in parts[1:]:
        h = h.merge(part)
    value, cdf = h.cdf(v.min(), v.max())
    assert np.array_equal(value[1:-1], edges) and (value[0], value[-1]) == (v.min(), v.max())
    assert np.array_equal(cdf[1:-1], (v[None, :] < edges[:, None]).sum(axis=1) / len(v))
    assert (cdf[0], cdf[-1]) == (0.0, 1.0) and np.all(np.diff(cdf[1:-1]) >= 0)


def test_chunk_seed_is_the_spawned_child():
    children = np.random.SeedSequence(42).spawn(5)
    for i, child in enumerate(children):
        assert np.array_equal(chunk_seed(42, i).generate_state(4), child.generate_state(4))


# --- Monte Carlo against numpy on every draw; Sobol and Morris against SALib -----------------------

@pytest.mark.slow  # over a second of CPU (measured 2026-12-06): make test only
def test_monte_carlo_summary_equals_numpy_on_every_draw(default_scenario):
    """Three chunks of 2000, 2000 and 1000 draws, the draws rebuilt chunk by chunk and summarized by numpy."""
    result = monte_carlo(default_scenario, METRICS, samples=5000, seed=9, chunk_size=2000, keep=100)
    metrics = tuple(parse_metric(default_scenario, m) for m in METRICS)
    job = MonteCarloJob((metric_cell(default_scenario, metrics, sampling_plan(default_scenario), 5000),), 9, 2000)
    every = {k: np.concatenate([chunk_values(job, (0, i))[k] for i in range(3)]) for k in chunk_values(job, (0, 0))}
    s = result.summary.set_index("metric")
    for m in METRICS:
        v = every[m]
        assert s.loc[m, "mean"] == pytest.approx(v.mean(), rel=1e-12)
        assert s.loc[m, "std_error"] == pytest.approx(v.std(ddof=1) / np.sqrt(5000), rel=1e-9)
        assert (s.loc[m, "n"], s.loc[m, "min"], s.loc[m, "max"]) == (5000, v.min(), v.max())
        assert s.loc[m, "p_win"] == every[f"wins:{m}"].mean() and s.loc[m, "p_feasible"] == every[f"feasible:{m}"].mean()
        assert s.loc[m, "p_baseline_feasible"] == every["feasible:baseline"].mean()
        # P10/P50/P90 from 2048 equal-mass bins of the 2000-draw pilot: within ~0.5 % of the draws' spread
        for q, p in ((10, "p10"), (50, "p50"), (90, "p90")):
            assert abs(s.loc[m, p] - np.percentile(v, q)) < 0.005 * (v.max() - v.min())
    assert np.array_equal(result.samples[METRICS[0]], every[METRICS[0]][:100]) and result.draws == 5000


def test_sobol_equals_salib_on_the_same_design():
    """Same scrambled Sobol' base sequence as SALib, so S1 and ST agree to rounding; chunks do not matter."""
    names = ["x1", "x2", "x3"]
    problem = {"num_vars": 3, "names": names, "bounds": [[0.0, 1.0]] * 3}
    u = salib_sample.sample(problem, 512, calc_second_order=False, seed=3)
    ref = salib_analyze.analyze(problem, ishigami(u), calc_second_order=False, seed=3)
    one = sobol_analysis(ishigami, names, 512, seed=3)
    chunked = sobol_analysis(ishigami, names, 512, seed=3, chunk_size=300)  # 32 base rows x 5 per chunk
    for frame in (one, chunked):
        assert frame["S1"].to_numpy() == pytest.approx(ref["S1"], abs=1e-10)
        assert frame["ST"].to_numpy() == pytest.approx(ref["ST"], abs=1e-10)
        # CLT half-widths: same order of magnitude as SALib's bootstrap
        assert np.all(frame["ST_conf"].to_numpy() < 3 * ref["ST_conf"] + 0.02)


def test_morris_statistics_equal_salib_on_its_design():
    """SALib's trajectories and outputs: the same elementary effects, so mu, mu* and sigma agree to rounding."""
    names = ["x1", "x2", "x3"]
    problem = {"num_vars": 3, "names": names, "bounds": [[0.0, 1.0]] * 3}
    u = salib_morris_sample.sample(problem, 200, num_levels=4, seed=2)
    ref = salib_morris_analyze.analyze(problem, u, ishigami(u), num_levels=4, seed=2)
    ours = morris_statistics(names, elementary_effects(u, ishigami(u), 3, 4))
    for key in ("mu", "mu_star", "sigma"):
        assert ours[key].to_numpy() == pytest.approx(np.asarray(ref[key]), rel=1e-12, abs=1e-12)
    # normal-theory half-width of mu* against SALib's bootstrap of the same quantity: the same size
    assert ours["mu_star_conf"].to_numpy() == pytest.approx(np.asarray(ref["mu_star_conf"]), rel=0.5)
    # and SALib's analysis of our own trajectories gives our statistics
    u = morris_trajectories(3, 4, 200, np.random.default_rng(7)).reshape(-1, 3)
    ref = salib_morris_analyze.analyze(problem, u, ishigami(u), num_levels=4, seed=2)
    ours = morris_statistics(names, elementary_effects(u, ishigami(u), 3, 4))
    for key in ("mu", "mu_star", "sigma"):
        assert ours[key].to_numpy() == pytest.approx(np.asarray(ref[key]), rel=1e-12, abs=1e-12)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 6), st.sampled_from([2, 4, 6, 8]), st.integers(1, 5), st.integers(0, 2**32 - 1))
def test_morris_trajectories_move_one_dimension_by_delta_per_step(dims, levels, count, seed):
    u = morris_trajectories(dims, levels, count, np.random.default_rng(seed))
    delta = morris_delta(levels)
    assert u.shape == (count, dims + 1, dims) and u.min() >= 0 and u.max() <= 1 + 1e-12
    assert np.allclose(u * (levels - 1), np.round(u * (levels - 1)))  # on the grid of levels
    step = np.diff(u, axis=1)
    assert np.all((np.abs(step) > 1e-12).sum(axis=2) == 1)  # one dimension per step
    assert np.allclose(np.abs(step).sum(axis=2), delta)
    assert np.all((np.abs(step) > 1e-12).sum(axis=1) == 1)  # every dimension moves exactly once


def test_morris_of_a_linear_function_gives_its_coefficients():
    """f(u) = 3 u1 - 2 u2 + 0 u3: every elementary effect is the coefficient, so mu = coefficient,
    mu* = |coefficient| and sigma = 0, whatever the design."""
    frame = morris_analysis(lambda u: 3 * u[:, 0] - 2 * u[:, 1], ["a", "b", "c"], trajectories=30, levels=4, seed=1,
                            chunk_size=40)  # 10 trajectories of 4 rows per chunk
    assert frame["mu"].to_numpy() == pytest.approx([3, -2, 0])
    assert frame["mu_star"].to_numpy() == pytest.approx([3, 2, 0])
    assert frame["sigma"].to_numpy() == pytest.approx([0, 0, 0], abs=1e-9)


def test_chunked_map_equals_one_block(asic_scenario):
    args = (asic_scenario, "workload.half_life_years", "program.external_units", (0.5, 8), (1e3, 1e6), 7, 9, "ratio:asic")
    whole, blocks = grid_map(*args), grid_map(*args, chunk_size=14)  # 2 rows of 7 per block
    assert np.array_equal(whole.z, blocks.z) and np.array_equal(whole.gap, blocks.gap)
    assert np.array_equal(whole.missed, blocks.missed)


# --- portfolio ------------------------------------------------------------------------------------

def test_portfolio_cells_are_validated_scenarios(toy_scenario):
    cells = portfolio_cells(toy_scenario, "toy-gpu", ["toy-gpu", "toy-sram"], workloads={"short": {"prompt_tokens": 100},
                            "long": {"prompt_tokens": 5000}}, shapes=["colocated", "disaggregated"], kv_link="ib-400g")
    # toy-gpu colocated against itself is skipped: 2 workloads x (gpu disaggregated, sram both ways)
    assert [(c.workload, c.device, c.shape) for c in cells] == [
        ("short", "toy-gpu", "disaggregated"), ("short", "toy-sram", "colocated"), ("short", "toy-sram", "disaggregated"),
        ("long", "toy-gpu", "disaggregated"), ("long", "toy-sram", "colocated"), ("long", "toy-sram", "disaggregated")]
    assert cells[1].scenario.values()["workload.prompt_tokens"] == 100
    assert cells[4].scenario.values()["workload.prompt_tokens"] == 5000
    assert cells[2].option == "toy-gpu+toy-sram"


def test_portfolio_cell_equals_a_monte_carlo_of_its_scenario(default_scenario):
    cells = portfolio_cells(default_scenario, "h100-sxm", ["groq-lpu", "mi300x"])
    frame = portfolio(cells, "ratio", samples=3000, seed=4, chunk_size=1000)
    for cell, row in zip(cells, frame.itertuples(), strict=True):
        direct = monte_carlo(cell.scenario, [f"ratio:{cell.option}"], 3000, seed=4, chunk_size=1000).summary.iloc[0]
        assert (row.mean, row.p_win, row.p50) == (direct["mean"], direct["p_win"], direct["p50"])


def test_portfolio_bad_device_names_the_cell_and_the_rule(toy_scenario):
    with pytest.raises(tco.InputError) as info:
        portfolio_cells(toy_scenario, "toy-gpu", ["toy-sram", "toy-tpu"])
    (error,) = info.value.errors
    assert error.path.startswith("analyses.portfolio[model=toy-1b, workload=scenario, device=toy-tpu, colocated].options[1]")
    assert error.value == "toy-tpu" and "is not a known device" in error.rule


# --- 1 process, 2 processes: the same numbers (marked slow: a dask cluster takes seconds to start) -----

@pytest.fixture(scope="module")
def cluster_runner():
    with ChunkRunner(workers=2, progress=False) as runner:
        yield runner


@pytest.mark.slow  # starts a 2-process dask cluster: runs in `make test`, not in `make test-fast`
def test_two_dask_workers_give_the_same_numbers_as_one_process(default_scenario, cluster_runner):
    """Bit for bit: summary, kept draws, distribution; Sobol and Morris indices."""
    kwargs = {"samples": 6000, "seed": 21, "chunk_size": 1000, "keep": 50}
    local = monte_carlo(default_scenario, METRICS, **kwargs)
    spread = monte_carlo(default_scenario, METRICS, runner=cluster_runner, **kwargs)
    assert local.summary.equals(spread.summary) and local.samples.equals(spread.samples)
    assert all(local.distribution(m).equals(spread.distribution(m)) for m in METRICS)
    names = ["x1", "x2", "x3"]
    assert sobol_analysis(ishigami, names, 256, 5, chunk_size=160).equals(
        sobol_analysis(ishigami, names, 256, 5, runner=cluster_runner, chunk_size=160))
    assert morris_analysis(ishigami, names, 20, seed=5, chunk_size=16).equals(
        morris_analysis(ishigami, names, 20, seed=5, runner=cluster_runner, chunk_size=16))


@pytest.mark.parametrize("where", ["in-process", pytest.param("cluster", marks=pytest.mark.slow)])
def test_cancel_stops_between_chunks_and_says_what_completed(default_scenario, request, where):
    seen = []
    runner = request.getfixturevalue("cluster_runner") if where == "cluster" else None
    with pytest.raises(StudyInterrupted) as info:
        monte_carlo(default_scenario, METRICS, 5000, seed=1, chunk_size=1000, progress=lambda done, total: seen.append(done),
                    cancel=lambda: len(seen) >= 2, runner=runner)
    assert info.value.total == 5 and 2 <= info.value.done < 5
    assert str(info.value).endswith("chunks completed (cancelled)")
    if where == "in-process":  # asked before every chunk: the third never starts
        assert seen == [1000, 2000] and info.value.done == 2


@pytest.mark.slow  # starts a 2-process dask cluster: runs in `make test`, not in `make test-fast`
def test_a_failing_chunk_on_a_worker_stops_the_study_and_says_what_completed(default_scenario, cluster_runner):
    cell = metric_cell(default_scenario, (), sampling_plan(default_scenario), 10)
    job = MonteCarloJob((cell,), 0, 10)
    with pytest.raises(StudyInterrupted) as info:  # task (1, 0) names a cell that does not exist: IndexError on the worker
        cluster_runner.fold(chunk_values, job, [(0, 0), (1, 0)], lambda acc, v: acc + 1, 0, "test")
    assert info.value.total == 2 and info.value.done <= 1 and isinstance(info.value.cause, IndexError)


# --- command line: workers, interruption, no partial output ------------------------------------------

def write_mc_study(tmp_path, samples=3000):
    data = {"name": "toy-mc", "question": "How often does the toy SRAM chip win?", "scenario": str(DATA / "toy.yaml"),
            "metric": "ratio:sram", "seed": 3,
            "analyses": {"sweep": {"param": "devices.toy-sram.price_usd", "low": 1000, "high": 100000, "points": 5},
                         "monte_carlo": {"samples": samples, "keep_samples": 50, "chunk_size": 1000}}}
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize("error, code, reason", [(RuntimeError("disk on fire"), 1, "RuntimeError: disk on fire"),
                                                 (KeyboardInterrupt(), 130, "interrupted")])
def test_interrupted_study_reports_chunks_done_and_leaves_no_output(tmp_path, capsys, monkeypatch, error, code, reason):
    real = montecarlo_module.chunk_aggregates

    def failing(job, task):
        if task[1] == 2:
            raise error
        return real(job, task)

    monkeypatch.setattr(montecarlo_module, "chunk_aggregates", failing)
    out = tmp_path / "out"
    path = write_mc_study(tmp_path)
    assert main(["study", str(path), "--out", str(out)]) == code
    err = capsys.readouterr().err
    # chunk 0 (the pilot pass) and chunk 1 completed; chunk 2 failed
    assert f"monte carlo: stopped after 2 of 3 chunks completed ({reason})" in err
    assert "analyses completed before it: sweep" in err and "Traceback" not in err
    assert not out.exists() and [p.name for p in tmp_path.iterdir()] == ["study.yaml"]


@pytest.mark.slow  # starts a 2-process dask cluster: runs in `make test`, not in `make test-fast`
def test_cli_study_with_two_workers_matches_one_process(tmp_path):
    path = write_mc_study(tmp_path, samples=600)
    assert main(["study", str(path), "--out", str(tmp_path / "one")]) == 0
    assert main(["study", str(path), "--out", str(tmp_path / "two"), "--workers", "2"]) == 0
    one, two = ((tmp_path / d / "montecarlo_summary.csv").read_text() for d in ("one", "two"))
    assert one == two
    assert len((tmp_path / "one" / "montecarlo_samples.csv").read_text().splitlines()) == 51


@pytest.mark.parametrize("argv, message", [
    (["--workers", "0"], "--workers: got 0"),
    pytest.param(["--scheduler", "tcp://127.0.0.1:1"], "--scheduler: got 'tcp://127.0.0.1:1'", marks=pytest.mark.slow)])
def test_cli_bad_workers_or_scheduler_exit_2(tmp_path, capsys, monkeypatch, argv, message):
    monkeypatch.setattr("tco.studies.parallel.SCHEDULER_TIMEOUT_S", 1)
    out = tmp_path / "out"
    assert main(["study", str(write_mc_study(tmp_path)), "--out", str(out), *argv]) == 2
    assert message in capsys.readouterr().err and not out.exists()

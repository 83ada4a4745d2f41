"""The calibration data (validation/measurements.yaml): schema, split, cross-references, and published figures."""

from __future__ import annotations

import pytest
import yaml
from validation_data import data_rows

from tco.analysis.validation.cases import OFFLINE_TPOT_TARGET_S, OFFLINE_TTFT_TARGET_S, load_suite
from tco.analysis.validation.measurements import IN_SAMPLE_ROUNDS, MEASUREMENTS_PATH, load_measurements
from tco.foundation.errors import InputError
from tco.inputs.catalog import load_catalog

M = load_measurements()
CATALOG = load_catalog()


def test_rounds_are_split_in_and_out_of_sample():
    inside, outside = M.split("in_sample"), M.split("out_of_sample")
    assert len(inside) >= 10 and len(outside) >= 20
    assert {r.round for r in inside} == set(IN_SAMPLE_ROUNDS)
    assert {r.round for r in outside} >= {"v5.0", "v5.1"} and not {r.round for r in outside} & set(IN_SAMPLE_ROUNDS)
    assert {r.benchmark for r in M.mlperf} >= {"llama2-70b", "mixtral-8x7b", "llama3.1-405b"}
    assert {r.scenario for r in M.mlperf} == {"offline", "server", "interactive"}


def test_records_name_catalog_devices_and_models():
    for r in M.mlperf:
        assert r.device is None or r.device in CATALOG.devices, r.id
        assert M.benchmarks[r.benchmark].model in CATALOG.models, r.benchmark
    for r in M.per_user:
        assert r.device is None or r.device in CATALOG.devices, r.id
        assert r.model is None or r.model in CATALOG.models, r.id
    assert {r.device for r in M.per_user} >= {"groq-lpu", "cerebras-cs3", "sambanova-sn40l"}


def test_llama2_latency_limits_match_loadgen():
    """mlperf.conf ([mlperf-loadgen-conf]): llama2-70b Server TTFT 2,000 ms / TPOT 200 ms, interactive 450 / 40, p99."""
    lat = M.benchmarks["llama2-70b"].latency
    assert (lat["server"].ttft_s, lat["server"].tpot_s, lat["server"].percentile) == (2.0, 0.2, 99)
    assert (lat["interactive"].ttft_s, lat["interactive"].tpot_s) == (0.45, 0.04)
    big = M.benchmarks["llama3.1-405b"].latency["server"]
    assert (big.ttft_s, big.tpot_s) == (6.0, 0.175)


def test_llama2_dataset_statistics_and_the_294_token_finding():
    """[mlperf-llama2-reference]: 24,576 samples, FP16 reference 294.45 OUTPUT tokens per sample; results gate at
    90 % of it: 0.9 x 294.45 = 265.005. The logged offline runs generate 290-294 tokens per sample
    (H100 v4.1: 24,524.9 / 84.4792 = 290.31), between the gate and the reference."""
    b = M.benchmarks["llama2-70b"]
    assert b.samples == 24_576 and b.max_input_tokens == 1024
    assert b.min_tokens_per_sample == pytest.approx(0.9 * b.reference_mean_output_tokens, rel=1e-12)
    logged = [r.output_tokens_per_sample for r in M.mlperf if r.benchmark == "llama2-70b" and r.output_tokens_per_sample]
    assert logged and all(b.min_tokens_per_sample < x < b.reference_mean_output_tokens for x in logged)
    h100 = next(r for r in M.mlperf if r.id == "v4.1-nvidia-h100x8-llama2-70b-offline")
    assert h100.output_tokens_per_sample == pytest.approx(290.31, abs=0.01)


def test_llama2_mean_input_length_is_the_stratified_mean_of_the_committed_sample():
    """The mean INPUT length no publication states ([mlperf-openorca-lengths]): the set is 4 equal strata of 6,144
    samples (OpenOrca origins cot, flan, niv, t0), so the mean is the average of the 4 stratum means of the
    committed systematic sample (1,950 rows): (120.9 + 173.2 + 253.9 + 300.8) / 4 = 212.2 tokens; its standard
    error sqrt(sum s_h^2 / n_h) / 4 is ~3.3 tokens (1.6 %). Every length is within the benchmark's 1,024 cap."""
    rows = data_rows("openorca-input-lengths-sample.csv")
    assert len(rows) == 1950
    by_stratum: dict[str, list[int]] = {}
    for row in rows:
        by_stratum.setdefault(row["stratum"], []).append(int(row["input_tokens"]))
    assert list(by_stratum) == ["cot", "flan", "niv", "t0"] and all(len(v) >= 450 for v in by_stratum.values())
    assert all(1 <= x < 1024 for v in by_stratum.values() for x in v)
    means = [sum(v) / len(v) for v in by_stratum.values()]
    variances = [sum((x - m) ** 2 for x in v) / (len(v) - 1) / len(v) for v, m in zip(by_stratum.values(), means, strict=True)]
    se = sum(variances) ** 0.5 / 4
    assert M.benchmarks["llama2-70b"].mean_input_tokens == pytest.approx(sum(means) / 4, abs=0.05)
    assert 3.0 < se < 3.6


def test_mixtral_mean_input_length_is_the_stratified_mean_of_the_committed_rows():
    """The mixtral-8x7b set is 3 strata of 5,000 (GSM8K, OpenOrca, MBXP: [mlperf-mixtral-reference]) in that order in
    the per-sample extract ([mlperf-dataset-lengths]). OpenOrca is read whole (its 5,000 rows: mean 415.39); GSM8K by
    5 systematic windows (256 rows, mean 667.1: 5-shot prompts of 614-834 tokens); MBXP by its first 448 rows read whole
    plus 5 windows (271 rows) for the other 4,552, (sum_all + 4,552 x window mean) / 5,000 = 208.3. A window takes the
    rows that START within 400 characters after its offset, so every row of a sampled stretch is drawn with
    probability 400 / 8,000 whatever its length: the rows' character positions, rebuilt from the committed counts, must
    fall in their windows and fill them. Mean = (667.1 + 415.39 + 208.3) / 3 = 430.3 tokens, standard error 2.6 (window
    means as clusters). The reference output lengths of the same rows, 150.6 +- 4.2, bracket the published 144.84."""
    import math

    blocks: dict[str, list[tuple[int, int, int]]] = {}
    position = 0
    for row in data_rows("mixtral-8x7b-lengths-sample.csv"):
        a, b = int(row["input_tokens"]), int(row["output_tokens"])
        if row["start"]:
            position = int(row["start"])
        blocks.setdefault(row["block"], []).append((position, a, b))
        position += len(f"{a},{b}") + 1
    windows = {k: v for k, v in blocks.items() if "@" in k}
    for name, rows in windows.items():
        offset = int(name.split("@")[1])
        end = rows[-1][0] + len(f"{rows[-1][1]},{rows[-1][2]}") + 1
        assert all(offset <= p < offset + 400 for p, _, _ in rows) and end >= offset + 400, name
    assert sorted(int(k.split("@")[1]) for k in windows) == [0, 8000, 16000, 24000, 32000, 80000, 88000, 96000, 104000,
                                                             112000]
    orca, mbxp_all = blocks["openorca"], blocks["mbxp"]
    assert len(orca) == 5000 and orca[0][0] == 38318 and mbxp_all[0][0] == orca[-1][0] + len(f"{orca[-1][1]},{orca[-1][2]}") + 1

    def stratum(prefix: str, whole: list, column: int) -> tuple[float, float]:
        clusters = [[r[column] for r in v] for k, v in windows.items() if k.startswith(prefix + "@")]
        n = sum(map(len, clusters))
        mean = sum(map(sum, clusters)) / n
        se = math.sqrt(sum((sum(c) - mean * len(c)) ** 2 for c in clusters) / (len(clusters) * (len(clusters) - 1))) / (
            n / len(clusters))
        rest = 5000 - len(whole)
        return (sum(r[column] for r in whole) + rest * mean) / 5000, se * rest / 5000

    for column, published, expected, expected_se in ((1, M.benchmarks["mixtral-8x7b"].mean_input_tokens, 430.3, 2.6),
                                                     (2, M.benchmarks["mixtral-8x7b"].reference_mean_output_tokens, 150.6, 4.2)):
        (gsm, gse), (mbxp, mse) = stratum("gsm8k", [], column), stratum("mbxp", mbxp_all, column)
        mean = (gsm + sum(r[column] for r in orca) / 5000 + mbxp) / 3
        se = math.hypot(gse, mse) / 3
        assert mean == pytest.approx(expected, abs=0.05) and se == pytest.approx(expected_se, abs=0.05)
        assert abs(mean - published) < 2 * se if column == 2 else mean == pytest.approx(published, abs=0.05)


def test_llama31_405b_lengths_are_the_means_of_the_whole_dataset():
    """Every one of the 8,313 samples ([mlperf-dataset-lengths], read in full): prompts of 476 to 19,988 tokens,
    78,380,323 / 8,313 = 9,428.6 on average; the reference outputs sum to 5,691,783, a mean of 684.68, the
    'tokens_per_sample' the reference README publishes ([mlperf-llama31-405b-reference]) -- a check of the transcription."""
    rows = [(int(r["input_tokens"]), int(r["output_tokens"])) for r in data_rows("llama3.1-405b-lengths.csv")]
    bench = M.benchmarks["llama3.1-405b"]
    assert len(rows) == bench.samples == 8313
    assert sum(a for a, _ in rows) == 78_380_323 and (min(a for a, _ in rows), max(a for a, _ in rows)) == (476, 19_988)
    assert bench.mean_input_tokens == pytest.approx(78_380_323 / 8313, abs=0.05)
    assert sum(b for _, b in rows) / 8313 == pytest.approx(bench.reference_mean_output_tokens, abs=0.005)
    assert bench.min_tokens_per_sample == pytest.approx(0.9 * bench.reference_mean_output_tokens, rel=1e-12)


def test_the_chat_spread_is_that_of_the_committed_azure_trace_rows():
    """[azure-llm-trace-2023]: the first 429 conversation requests, prompts of mean 911.4 and (population) standard
    deviation 808.2 tokens, squared CV 808.2^2 / 911.4^2 = 0.786, largest 4,107 (4.5x the mean): the 0.79 of every
    bundled chat scenario's ``workload.prompt_tokens_scv``, which cites it."""
    import statistics

    import tco

    prompts = [int(r["input_tokens"]) for r in data_rows("azure-llm-trace-2023-conv-first-429.csv")]
    mean, sd = statistics.fmean(prompts), statistics.pstdev(prompts)
    assert len(prompts) == 429 and max(prompts) == 4107
    assert mean == pytest.approx(911.4, abs=0.05) and sd == pytest.approx(808.2, abs=0.05)
    assert (sd / mean) ** 2 == pytest.approx(0.786, abs=5e-4)
    for name in ("default", "voice-agent", "fleet-split", "custom-asic", "specialization-over-time"):
        spread = tco.load_scenario(name).params["workload.prompt_tokens_scv"]
        assert spread.value == round((sd / mean) ** 2, 2) and "azure-llm-trace-2023" in spread.source, name


def test_cases_of_the_other_benchmarks_read_their_lengths():
    """A Mixtral case reads the dataset's mean prompt (430.3) and the v4.1 logs' output (52,415.9 / 359.173 = 145.9
    tokens per sample, for the later rounds too); a Llama 3.1 405B case, with no run that logs samples/s, the
    reference's published mean output (684.68) and its prompt 9,428.6. Benchmarks without a mean prompt have no case."""
    cases = load_suite().cases
    mixtral = [c for c in cases if c.conditions.model == "mixtral-8x7b" and c.rows and c.rows[0].startswith("v")]
    l405 = [c for c in cases if c.conditions.model == "llama-3.1-405b" and c.rows[0].startswith("v")]
    assert len(mixtral) >= 14 and len(l405) >= 9
    assert all(c.conditions.prompt_tokens == 430.3 for c in mixtral)
    assert all(c.conditions.output_tokens == pytest.approx(52415.9 / 359.173, rel=2e-3) for c in mixtral)
    assert all((c.conditions.prompt_tokens, c.conditions.output_tokens) == (9428.6, 684.68) for c in l405)
    benchmarks = {M.records()[r].benchmark for c in cases for r in c.rows if hasattr(M.records()[r], "benchmark")}
    assert all(M.benchmarks[b].mean_input_tokens is not None for b in benchmarks)
    assert {"deepseek-r1", "llama3.1-8b", "gpt-oss-120b"}.isdisjoint(benchmarks)


def test_rankings_reproduce_published_ratios():
    """Per accelerator, v4.1 offline: H200/H100 = 31,302.7 / 24,524.9 = 1.276 (brief: ~1.1-1.3x; v5.0: 34,988.2 /
    31,306.8 = 1.118); MI300X/H200 = 23,514.8 / 31,302.7 = 0.751 (brief: ~0.73-0.80x); B200 (FP4, 1 GPU) over
    H100 (4 GPUs) = 11,264.4 / (10,700 / 4) = 4.21, the press's "up to 4X"."""
    ratio = {k.id: M.ratio(k) for k in M.rankings}
    assert ratio["h200-vs-h100-llama2-offline-v4.1"] == pytest.approx(31302.7 / 24524.9)
    assert 1.1 <= ratio["h200-vs-h100-llama2-offline-v5.0"] <= ratio["h200-vs-h100-llama2-offline-v4.1"] <= 1.3
    assert ratio["mi300x-vs-h200-llama2-offline-v4.1"] == pytest.approx(23514.8 / 31302.7)
    assert 0.70 <= ratio["mi300x-vs-h200-llama2-server-v4.1"] <= ratio["mi300x-vs-h200-llama2-offline-v4.1"] <= 0.80
    assert ratio["b200-fp4-vs-h100-llama2-offline-v4.1"] == pytest.approx(11264.4 / (10700 / 4))
    assert ratio["cerebras-vs-groq-llama31-70b-per-user"] == pytest.approx(450 / 250)


def test_suite_cases_take_their_figures_from_the_measurement_rows():
    """validation/cases.yaml names rows of this file; each case publishes its row's figure (a ratio: the rows'
    quotient on its basis) and carries the row's round as in or out of sample."""
    records = M.records()
    checked = 0
    for case in load_suite().cases:
        if len(case.rows) == 1 and case.metric == "system_output_tokens_per_s":
            row = records[case.rows[0]]
            assert case.published == row.tokens_per_s and case.conditions.system_devices == row.count, case.name
            assert case.sample == getattr(row, "split", "in_sample"), case.name  # a vendor's figure: in sample
            checked += 1
    assert checked >= 30
    rank = next(c for c in load_suite().cases if c.name == "rank-mi300x-over-h200-llama2-offline-v4.1")
    assert rank.published == pytest.approx((23514.8 / 8) / (31302.7 / 8), rel=1e-12)


def test_a_vendor_throughput_case_runs_offline_at_its_own_lengths():
    """NVIDIA's 463.1 output tokens/s of Llama 3.1 405B on 8 H200s at 2,048 in / 128 out ([nvidia-405b-modelopt-2024]):
    the case reads the row's lengths, its 8 GPUs and the Offline targets (no latency bound), in sample."""
    case = next(c for c in load_suite().cases if c.name == "nvidia-h200x8-llama31-405b-fp8-2048-128")
    c = case.conditions
    assert (case.published, case.sample, case.scenario) == (463.1, "in_sample", "offline")
    assert (c.prompt_tokens, c.output_tokens, c.system_devices, c.devices_per_replica) == (2048, 128, 8, 8)
    assert (c.tpot_target_s, c.ttft_target_s) == (OFFLINE_TPOT_TARGET_S, OFFLINE_TTFT_TARGET_S)


def _broken(tmp_path, mutate):
    data = yaml.safe_load(MEASUREMENTS_PATH.read_text())
    mutate(data)
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(InputError) as info:
        load_measurements(path)
    return str(info.value)


def test_an_out_of_sample_round_cannot_be_marked_in_sample(tmp_path):
    def mutate(d):
        row = next(r for r in d["mlperf"] if r["round"] == "v5.0")
        row["split"] = "in_sample"
    assert "out_of_sample" in _broken(tmp_path, mutate)


@pytest.mark.slow  # over a second of CPU (measured 2026-12-06): make test only
def test_bad_references_are_named(tmp_path):
    assert "is not a record id" in _broken(tmp_path, lambda d: d["rankings"][0].update(numerator="no-such-row"))
    assert "ids must be unique" in _broken(tmp_path, lambda d: d["mlperf"][1].update(id=d["mlperf"][0]["id"]))
    message = _broken(tmp_path, lambda d: d["mlperf"][0].update(benchmark="gpt-5"))
    assert "mlperf[0]" in message and "gpt-5" in message
    assert "has no interactive latency limit" in _broken(
        tmp_path, lambda d: next(r for r in d["mlperf"] if r["benchmark"] == "mixtral-8x7b").update(scenario="interactive"))


def test_amd_latency_sweep_rows_transcribe_the_published_latencies():
    """AMD's vLLM latency table ([amd-vllm-dev-docker-mi300x]: Llama 3.1 70B FP8, 8 MI300X at tensor parallel 8,
    128 input / 2,048 output tokens) gives the end-to-end latency L of a fixed batch; each row is one sequence's
    speed over the whole run, 2048 / L tokens/s (prefill included, as the closed-loop case models it): at batch 1,
    2048 / 17.236 s = 118.82 tokens/s, at batch 128, 2048 / 46.484 s = 44.06 tokens/s."""
    latency_s = {1: 17.236, 2: 18.057, 4: 18.450, 8: 19.677, 16: 22.072, 32: 24.932, 64: 33.287, 128: 46.484}
    records = M.records()
    for batch, seconds in latency_s.items():
        row = records[f"amd-mi300xx8-llama31-70b-b{batch}"]
        assert (row.concurrency, row.count, row.prompt_tokens, row.output_tokens) == (batch, 8, 128, 2048)
        assert row.tokens_per_s_per_user == pytest.approx(2048 / seconds, abs=1e-4)
    assert records["amd-mi300xx8-llama31-70b-b1"].tokens_per_s_per_user == pytest.approx(118.82, abs=0.005)
    assert records["amd-mi300xx8-llama31-70b-b128"].tokens_per_s_per_user == pytest.approx(44.06, abs=0.005)

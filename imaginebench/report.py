"""``imaginebench report``: the results page, generated from stored result files and never edited by hand.

Inputs are the files runs and benchmarks write: each run's ``results.json`` (with its ``config.yaml`` beside it),
``rollout-quality`` reports, and ``benchmarks/peer_check.py``'s ``peer_<env>.json``. Runs are grouped by their
directory with the seed part removed (:mod:`imaginebench.run_groups`), so a group is one configuration over
seeds; the figures are drawn by :mod:`imaginebench.report_plots`. Success per level has Student's t intervals
over seeds (a group of one seed shows its mean only); the aggregates over tasks (interquartile mean,
probability of improvement, performance profiles) follow Agarwal et al. (2021), see
:mod:`imaginebench.robust_statistics`.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from imaginebench.levels import IMAGINED_LEVELS, LEVELS
from imaginebench.report_plots import plot_mixing, plot_profiles, plot_runs
from imaginebench.robust_statistics import bootstrap_interval, interquartile_mean, probability_of_improvement
from imaginebench.run_groups import (
    Run,
    baseline_of,
    data_description,
    find_runs,
    grouped,
    mean_and_interval,
    mixing_curves,
    task_scores,
)
from imaginebench.stage_costs import read_stage_costs
from imaginebench.storage import atomic_write_text, read_json_file


def percent(values: list[float]) -> str:
    mean, half_width = mean_and_interval([100 * v for v in values])
    return f"{mean:.1f}" if half_width is None else f"{mean:.1f} ± {half_width:.1f}"


def run_table(groups: dict[str, list[Run]]) -> list[str]:
    lines = [
        "| run group | algorithm | data | seeds | updates × batch | episodes per task | " + " | ".join(LEVELS) + " |",
        "|---|---|---|---:|---|---:|" + "---:|" * len(LEVELS),
    ]
    for group, members in groups.items():
        first = members[0]
        batch = first.results.get("batch_size") or first.config.get("data", {}).get("batch_size", "?")
        levels = [
            percent([m.results["levels"][level]["success_rate"] for m in members if level in m.results["levels"]])
            if all(level in m.results["levels"] for m in members)
            else "–"
            for level in LEVELS
        ]
        lines.append(
            f"| {group} | {first.results['algorithm']} | {data_description(first.config, first.results.get('datasets'))} | {len(members)} | "
            f"{first.results['global_step']:,} × {batch} | {first.results['episodes_per_task']} | "
            + " | ".join(levels)
            + " |"
        )
    return lines


def aggregate_table(groups: dict[str, list[Run]]) -> list[str]:
    """Per group and novel level: IQM over seeds × tasks, and the probability of improving on the group's
    real-only baseline, each with a 95 % stratified bootstrap interval."""
    lines = [
        "| run group | " + " | ".join(f"{level}: IQM | {level}: P(> real only)" for level in IMAGINED_LEVELS) + " |",
        "|---|" + "---:|---:|" * len(IMAGINED_LEVELS),
    ]
    for group, members in groups.items():
        baseline = baseline_of(group, groups)
        cells = []
        for level in IMAGINED_LEVELS:
            scores = task_scores(members, level)
            if scores is None:
                cells += ["–", "–"]
                continue
            iqm = bootstrap_interval(interquartile_mean, [100 * scores])
            cells.append(f"{iqm[0]:.1f} [{iqm[1]:.1f}, {iqm[2]:.1f}]")
            reference = task_scores(groups[baseline], level) if baseline else None
            if reference is None or reference.shape[1] != scores.shape[1]:
                cells.append("–")
            else:
                improvement = bootstrap_interval(probability_of_improvement, [scores, reference])
                cells.append(f"{improvement[0]:.2f} [{improvement[1]:.2f}, {improvement[2]:.2f}]")
        lines.append(f"| {group} | " + " | ".join(cells) + " |")
    return lines


def per_task_tables(groups: dict[str, list[Run]]) -> list[str]:
    """Per level: success (%) of every task, mean ± 95 % Student-t half-width over seeds, one row per group."""
    lines = []
    runs = [run for members in groups.values() for run in members]
    for level in LEVELS:
        tasks = sorted({task for run in runs for task in run.results["levels"].get(level, {}).get("per_task", {})})
        if not tasks:
            continue
        lines += [
            "",
            f"Per task, {level}:",
            "",
            "| run group | " + " | ".join(tasks) + " |",
            "|---|" + "---:|" * len(tasks),
        ]
        for group, members in groups.items():
            cells = []
            for task in tasks:
                values = [m.results["levels"].get(level, {}).get("per_task", {}).get(task) for m in members]
                cells.append("–" if None in values else percent([v["success_rate"] for v in values]))
            lines.append(f"| {group} | " + " | ".join(cells) + " |")
    return lines


def quality_table(reports: list[dict[str, Any]]) -> list[str]:
    """One row per env and level (task "all"), then one per task of it: a level's figure hides which tasks the model
    imagines (the shipped BabyAI model reaches OpenLock's goal in 87 % of its rollouts, never cleanly)."""
    lines = [
        "| env | level | task | rollouts | goal consistency | clean (no transition error) | actions replayed reach the "
        "goal | one-step transition error | drift | illegal states | mean length |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for report in reports:
        for task, summary in [("all", report["overall"]), *report.get("per_task", {}).items()]:
            one_step, clean = summary["one_step_error_rate"], summary.get("clean_goal_consistency")
            replayed = summary.get("replayed_goal_consistency")  # absent from reports written before it existed
            lines.append(
                f"| {report['env_id']} | {report['level']} | {task} | {summary['rollouts']} | "
                f"{summary['goal_consistency']:.1%} | {'–' if clean is None else f'{clean:.1%}'} | "
                f"{'–' if replayed is None else f'{replayed:.1%}'} | "
                f"{'n/a' if one_step is None else f'{one_step:.1%}'} | {summary['drift_error_rate']:.1%} | "
                f"{summary['illegal_state_rate']:.1%} | {summary['mean_length']:.1f} |"
            )
    return lines


PEER_IMPLEMENTATIONS = {"ours": "ours", "ours-bf16": "ours, bf16-mixed", "d3rlpy": "d3rlpy"}
"""The implementations ``peer_check.py`` stores, and their column names."""
PEER_HEADER = [
    "| env | algorithm | updates × batch | seeds | "
    + " | ".join(f"{name}: train success" for name in PEER_IMPLEMENTATIONS.values())
    + " |",
    "|---|---|---|---:|" + "---:|" * len(PEER_IMPLEMENTATIONS),
]


def peer_rows(env_id: str, peers: dict[str, Any]) -> list[str]:
    lines = []
    for algorithm, entry in peers.items():
        settings, runs = entry["settings"], entry["runs"]
        successes = [percent([r[0] for r in runs[label]]) if runs.get(label) else "–" for label in PEER_IMPLEMENTATIONS]
        lines.append(
            f"| {env_id} | {algorithm} | {settings['steps']:,} × {settings['batch_size']} | {len(settings['seeds'])} | "
            + " | ".join(successes)
            + " |"
        )
    return lines


SPEED_HEADER = [
    "| env | algorithm | implementation | updates × batch | updates/s | ÷ d3rlpy | GFLOP / update | % of peak |",
    "|---|---|---|---|---:|---:|---:|---:|",
]


def speed_rows(env_label: str, results: dict[str, Any]) -> list[str]:
    """One row per algorithm and implementation of a ``benchmarks/peer_speed.py`` file: the median
    updates/s, its ratio to d3rlpy's, operations per update and the share of the measured peak."""
    rows = []
    for algorithm, entry in results.items():
        medians = {label: statistics.median(values) for label, values in entry["updates_per_second"].items()}
        for label, speed in medians.items():
            ratio = f"{speed / medians['d3rlpy']:.2f}" if "d3rlpy" in medians else "–"
            flops = entry.get("flops_per_update", {}).get(label)
            peak = entry.get("peak_gflops", {}).get(label)
            gflop = f"{flops / 1e9:.3f}" if flops else "–"
            share = f"{100 * flops * speed / 1e9 / peak:.0f}" if flops and peak else "–"
            rows.append(
                f"| {env_label} | {algorithm} | {label} | {entry['steps']} × {entry['batch_size']} | {speed:.1f} | "
                f"{ratio} | {gflop} | {share} |"
            )
    return rows


PARALLEL_HEADER = [
    "| env | job | workers | one process (s) | workers (s) | speed-up | commit |",
    "|---|---|---:|---:|---:|---:|---|",
]


def parallel_rows(results: dict[str, Any]) -> list[str]:
    """One row per job of a ``benchmarks/collect_speed.py`` or ``evaluation_speed.py`` file."""
    return [
        f"| {results['env']} | {timing['job']} | {results['workers']} | {timing['one']:.2f} | {timing['many']:.2f} | "
        f"{timing['one'] / timing['many']:.2f}× | {results.get('commit') or 'not recorded'} |"
        for timing in results["timings"]
    ]


STAGE_HEADER = ["| env | stage | work | CPU min | wall min | machine |", "|---|---|---|---:|---:|---|"]


def stage_rows(content: dict[str, Any]) -> list[str]:
    """One row per stage of an ``imaginebench pipeline`` run's ``stage_costs.json``."""
    return [
        f"| {content['env_id']} | {stage} | {record['work']} | {record['cpu_s'] / 60:.1f} | "
        f"{record['wall_s'] / 60:.1f} | {record['machine']} |"
        for stage, record in content["stages"].items()
    ]


def speed_env(path: Path) -> str:
    """``peer_speed_<env>.json`` → ``<env>``; ``peer_speed_<env>_2threads.json`` → ``<env>, 2 threads``;
    ``peer_speed_<env>_H100.json`` (a GPU run) → ``<env>, H100``; ``peer_speed_<env>_Xeon-AMX_2threads.json``
    (a CPU named by ``peer_speed.py --machine``) → ``<env>, Xeon-AMX, 2 threads``."""
    env, *where = path.stem.removeprefix("peer_speed_").split("_")
    names = [f"{part.removesuffix('threads')} threads" if part.endswith("threads") else part for part in where]
    return ", ".join([env, *names])


def read_json_files(paths: list[Path]) -> list[tuple[Path, Any]]:
    return [(path, read_json_file(path)) for path in paths]


def write_report(
    run_roots: list[Path],
    out: Path,
    quality: list[Path],
    peers: list[Path],
    command: str,
    per_task: bool = False,
    speed: list[Path] = (),
    parallel: list[Path] = (),
    stages: list[Path] = (),
) -> list[Path]:
    """Write ``out`` and one plot per env beside it (``per_task``: also every task's success; ``speed``:
    ``benchmarks/peer_speed.py`` files; ``parallel``: ``collect_speed.py`` and ``evaluation_speed.py``
    files; ``stages``: ``imaginebench pipeline``'s ``stage_costs.json`` files); returns the files written."""
    runs = find_runs(run_roots)
    lines = [
        "# Results",
        "",
        f"<!-- Generated by `{command}`; do not edit: change the stored result files and run it again. -->",
        "",
        "Success per level (%) in the real environments: mean ± the half-width of the 95 % Student-t interval over "
        "seeds. Each run group is one configuration; its data column is read from the stored `config.yaml`.",
    ]
    written = [out]
    for env_id in sorted({run.results["env_id"] for run in runs}):
        env_runs = [run for run in runs if run.results["env_id"] == env_id]
        groups = grouped(env_runs)  # checked once: every table and plot below reads these groups
        plot = out.with_name(f"{out.stem}-{env_id}.png")
        plot_runs(groups, plot)
        written.append(plot)
        commits = sorted({str(run.results.get("commit") or "not recorded") for run in env_runs})
        lines += ["", f"## {env_id}", "", *run_table(groups), "", f"Source commit(s): {', '.join(commits)}."]
        lines += ["", f"![success per level, {env_id}]({plot.name})"]
        lines += [
            "",
            f"Aggregates over the tasks of each novel level, {env_id}: interquartile mean of success (%) over seeds × "
            "tasks, and the probability that a run of the group beats a run of the same algorithm on real data only "
            "(per task, averaged), each with a 95 % stratified bootstrap interval (Agarwal et al., 2021; 2,000 "
            "resamples, seed 0).",
            "",
            *aggregate_table(groups),
        ]
        profile = out.with_name(f"{out.stem}-{env_id}-profiles.png")
        if plot_profiles(groups, profile):
            written.append(profile)
            lines += ["", f"![performance profiles, {env_id}]({profile.name})"]
        curves = mixing_curves(groups)
        if curves:
            mixing = out.with_name(f"{out.stem}-{env_id}-mixing.png")
            plot_mixing(groups, curves, mixing)
            written.append(mixing)
            points = "; ".join(", ".join(f"{group} ({fraction:g})" for fraction, group in c.points) for c in curves)
            lines += [
                "",
                f"Success against the real fraction of each batch, {env_id}: run groups that differ in nothing else "
                f"({points}).",
                "",
                f"![mixing ratio, {env_id}]({mixing.name})",
            ]
        if per_task:
            lines += per_task_tables(groups)
    if quality:
        reports = [report for _, content in read_json_files(quality) for report in content]
        lines += ["", "## Imaginary rollouts", "", "Replayed in the simulator (`imaginebench rollout-quality`).", ""]
        lines += quality_table(reports)
    if peers:
        lines += [
            "",
            "## Checks against d3rlpy",
            "",
            "Train-level success (%), `benchmarks/peer_check.py`: mean ± the half-width of the 95 % Student-t "
            "interval over seeds, as above.",
            "",
        ]
        lines += PEER_HEADER + [
            row for path, content in read_json_files(peers) for row in peer_rows(peer_env(path), content)
        ]
    if speed:
        lines += [
            "",
            "## Speed against d3rlpy",
            "",
            "Updates/s at batch 256 on the real data, data sampling included: median of paired runs "
            "(`benchmarks/peer_speed.py`), ours in float32 (`ours`) and with `--trainer.precision bf16-mixed` "
            "(`ours-bf16`), d3rlpy 2.8.1 in float32. GFLOP / update: every matrix product of one update, forward "
            "and backward, by torch's FLOP counter; % of peak: the GFLOP/s that makes over the matrix-product "
            "throughput measured in the same run, dtype and threads.",
            "",
            *SPEED_HEADER,
            *(row for path, content in read_json_files(list(speed)) for row in speed_rows(speed_env(path), content)),
        ]
    if parallel:
        lines += [
            "",
            "## Parallel collection and evaluation",
            "",
            "Wall time of the same job in one process and in worker processes, timed one after the other in the "
            "same run on an otherwise idle machine, with identical output (`benchmarks/collect_speed.py`, "
            "`benchmarks/evaluation_speed.py`: a seeded random policy, every level in one vector env).",
            "",
            *PARALLEL_HEADER,
            *(row for _, content in read_json_files(list(parallel)) for row in parallel_rows(content)),
        ]
    if stages:
        lines += [
            "",
            "## Cost of each stage",
            "",
            "`imaginebench pipeline` timed each stage it ran (`stage_costs.json` in its `--out`): CPU time of the "
            "process and the worker processes it waited for, and wall time. A stage kept from an earlier run keeps "
            "that run's figures; the real data are shared by every `--out`, so only the pipeline that collected them "
            "has a collect row.",
            "",
            *STAGE_HEADER,
            *(row for path in stages for row in stage_rows(read_stage_costs(path))),
        ]
    atomic_write_text("\n".join(lines) + "\n", out)
    return written


def peer_env(path: Path) -> str:
    """``peer_<env>.json`` → ``<env>``."""
    return path.stem.removeprefix("peer_")

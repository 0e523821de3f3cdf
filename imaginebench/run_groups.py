"""Stored runs read back and grouped over seeds: what every table and plot of the results page reads.

A run is a ``results.json`` with the ``config.yaml`` beside it. Runs are grouped by their directory with the seed
part removed (``.../babyai-bc-real/seed0`` and ``.../seed1`` form one group), so a group is one configuration over
seeds.
"""

from __future__ import annotations

import json
import math
import re
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from imaginebench.errors import UserInputError

SEED_PART = re.compile(r"^(?:(?P<prefix>.+)-)?seed\d+$")


@dataclass(frozen=True)
class Run:
    group: str
    results: dict[str, Any]
    config: dict[str, Any]


def run_group(run_dir: Path, root: Path) -> str:
    """``root/<group>/seed<k>`` → ``<group>``; ``root/<env>/<algo>-seed<k>`` → ``<env>/<algo>``."""
    parts = list(run_dir.relative_to(root).parts) if run_dir != root else [run_dir.name]
    match = SEED_PART.match(parts[-1])
    if match:
        parts = parts[:-1] + ([match["prefix"]] if match["prefix"] else [])
    return "/".join(parts) or run_dir.name


def find_runs(roots: list[Path]) -> list[Run]:
    runs = []
    for root in roots:
        if not root.is_dir():
            raise UserInputError(f"{root}: no such directory of runs")
        for path in sorted(root.rglob("results.json")):
            if path.parent.name in ("validate", "test"):  # a checkpoint's re-evaluation, not a run of its own
                continue
            config_path = path.parent / "config.yaml"
            config = yaml.safe_load(config_path.read_text()) if config_path.is_file() else {}
            try:
                results = json.loads(path.read_text())
                results["levels"]
            except (json.JSONDecodeError, KeyError) as error:
                raise UserInputError(f"{path}: not a results.json written by a run ({error})") from error
            runs.append(Run(run_group(path.parent, root), results, config or {}))
    if not runs:
        raise UserInputError(f"no results.json under {', '.join(map(str, roots))}")
    return runs


def mean_and_interval(values: list[float]) -> tuple[float, float | None]:
    """Mean and the half-width of its 95 % Student-t interval (``None`` for one value)."""
    from scipy.stats import t

    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, None
    return mean, float(t.ppf(0.975, len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values)))


def _dataset_label(path: str, env_id: str | None) -> str:
    """A folder in a data root's standard place (``<root>/<env_id>/<name>``) by name; any other by its path,
    since its name alone (``imaginary-easy``) hides which model or collection made it."""
    folder = Path(path)
    return folder.name if folder.parent.name == env_id else str(folder)


def data_sources(data: dict[str, Any]) -> tuple[str, str]:
    """``(real, imaginary)`` a run's data config reads: levels, or dataset folders; the imaginary part with the
    filter that kept it (empty without imaginary data)."""
    env_id = data.get("env_id")
    real = ", ".join([*data.get("real_levels", []), *(_dataset_label(path, env_id) for path in data.get("real", []))])
    imaginary = ", ".join(
        [*data.get("imaginary_levels", []), *(_dataset_label(path, env_id) for path in data.get("imaginary", []))]
    )
    if imaginary and data.get("imaginary_filter"):
        imaginary += f", kept: {'+'.join(data['imaginary_filter'])}"
    return real or "–", imaginary


def data_description(config: dict[str, Any], datasets: dict[str, Any] | None = None) -> str:
    """What a run trained on, from its config: :func:`data_sources` and the mix; with the ``datasets`` its
    results.json recorded, the grounded models (sha256 prefix) its imaginary data came from, any next-state read
    other than the rollout's, any decoding temperature other than greedy and the rollouts of each dataset, since a
    level's default data change with the shipped model and its settings (runs recorded before those fields say
    nothing; their commit does)."""
    data = config.get("data", {})
    real, imaginary = data_sources(data)
    if not imaginary or data.get("mix_ratio_real") == 1.0:
        return f"real {real}"
    datasets = datasets or {}
    models = sorted({sha[:8] for sha in datasets.get("imaginary_checkpoints", []) if sha})
    reads = sorted({read for read in datasets.get("imaginary_next_states", []) if read and read != "rollout"})
    sampled = sorted({float(t) for t in datasets.get("imaginary_temperatures", []) if t})
    episodes = [count for count in datasets.get("imaginary_episodes", []) if count]
    if models:
        made_of = [*models, *(f"next states from {read}" for read in reads)]
        made_of += [f"sampled at temperature {' / '.join(f'{t:g}' for t in sampled)}"] if sampled else []
        made_of += [f"{' / '.join(f'{count:,}' for count in episodes)} rollouts"] if episodes else []
        imaginary += f" (model {', '.join(made_of)})"
    mix = "concat" if data.get("mix_mode") == "concat" else f"{data.get('mix_ratio_real', 0.5):.0%} real"
    return f"real {real}; imaginary {imaginary}; {mix}"


def grouped(runs: list[Run]) -> dict[str, list[Run]]:
    """Runs by group; the seeds of a group must share env, algorithm, budget and data, or the mean means nothing."""
    groups: dict[str, list[Run]] = {}
    for run in runs:
        groups.setdefault(run.group, []).append(run)
    for group, members in groups.items():
        shapes = {
            (
                m.results["env_id"],
                m.results["algorithm"],
                m.results["global_step"],
                data_description(m.config, m.results.get("datasets")),
            )
            for m in members
        }
        if len(shapes) > 1:
            raise UserInputError(
                f"run group {group}: its seeds differ in env, algorithm, updates or data: {sorted(shapes)}"
            )
    return groups


def task_scores(members: list[Run], level: str) -> np.ndarray | None:
    """``(seeds, tasks)`` success per task of one level (``None`` where a seed did not evaluate it)."""
    if not all(level in m.results["levels"] and "per_task" in m.results["levels"][level] for m in members):
        return None
    tasks = sorted(members[0].results["levels"][level]["per_task"])
    return np.array([[m.results["levels"][level]["per_task"][t]["success_rate"] for t in tasks] for m in members])


def baseline_of(group: str, groups: dict[str, list[Run]]) -> str | None:
    """The real-data-only group of the same algorithm: ``<prefix>-real`` for the longest prefix of the name."""
    parts = group.split("-")
    for cut in range(len(parts) - 1, 0, -1):
        candidate = "-".join(parts[:cut]) + "-real"
        if candidate in groups and candidate != group:
            return candidate
    return None


def variant_labels(names: list[str]) -> dict[str, str]:
    """Each group name without the part all of ``names`` share up to a ``-`` (``babyai-bc-real`` among
    ``babyai-bc-*`` → ``real``); a lone name stays whole."""
    if len(names) < 2:
        return {name: name for name in names}
    shared = names[0]
    for name in names[1:]:
        while not name.startswith(shared):
            shared = shared[:-1]
    cut = shared.rfind("-") + 1
    return {name: name[cut:] or name for name in names}


@dataclass(frozen=True)
class MixingCurve:
    """Groups that differ only in their real fraction per batch: one point per fraction (the first group by name
    where two share one)."""

    description: str
    points: list[tuple[float, str]]  # (real fraction, group), by fraction


def mixing_curves(groups: dict[str, list[Run]], least_points: int = 3) -> list[MixingCurve]:
    """Every set of at least ``least_points`` real fractions of one algorithm, budget, model and otherwise
    identical data (ratio mixing), in the order of their first group."""
    families: dict[str, dict[float, str]] = {}
    descriptions: dict[str, str] = {}
    for group in sorted(groups):
        first = groups[group][0]
        data = dict(first.config.get("data", {}))
        if data.get("mix_mode", "ratio") != "ratio" or "mix_ratio_real" not in data:
            continue
        fraction = float(data.pop("mix_ratio_real"))
        data.pop("seed", None)
        key = json.dumps(
            [first.results["algorithm"], first.results["global_step"], first.config.get("model"), data],
            sort_keys=True,
            default=str,
        )
        families.setdefault(key, {}).setdefault(fraction, group)
        real, imaginary = data_sources(data)
        descriptions.setdefault(
            key, f"{first.results['algorithm']}, real {real}" + (f"; imaginary {imaginary}" if imaginary else "")
        )
    return [
        MixingCurve(descriptions[key], sorted(points.items()))
        for key, points in families.items()
        if len(points) >= least_points
    ]

"""Expert data collection: ``imaginebench collect``.

Episodes are spread evenly over the level's tasks (round robin) and episode ``i`` is seeded from
``(seed, i)``, so the output depends only on the arguments; writing is sharded and resumable
(:mod:`imaginebench.datasets.sharded`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tensordict import TensorDict

from imaginebench.datasets import DatasetError, EpisodeDataset
from imaginebench.datasets.locations import default_dataset_dir
from imaginebench.datasets.sharded import write_sharded
from imaginebench.errors import UserInputError, check_at_least, check_can_create, naming
from imaginebench.instructions import DEFAULT_ENCODER, InstructionEncoder, InstructionTable
from imaginebench.levels import resolve_level
from imaginebench.processes import available_cores
from imaginebench.registry import get_domain, instruction_table, make
from imaginebench.storage import read_json

STEP_FIELDS = (
    "state",
    "next_state",
    "action",
    "reward",
    "terminated",
    "truncated",
    "success",
    "episode_id",
    "step",
    "task_id",
    "instruction_id",
)


def episode_seed(seed: int, index: int) -> int:
    """Independent, reproducible seed of episode ``index`` of a run seeded with ``seed``."""
    return int(np.random.SeedSequence([seed, index]).generate_state(1)[0])


def run_expert_episodes(
    env_id: str,
    level: str,
    indices: range,
    seed: int,
    encoder: str,
    pooling: str,
    epsilon: float = 0.0,
    steps_after_success: int = 0,
) -> EpisodeDataset:
    """Roll out the domain's expert for the given episode indices (tasks assigned round-robin). ``epsilon``
    (discrete actions): each step takes, and records, a uniformly random action with that probability.
    ``steps_after_success`` (discrete actions): an episode goes on for that many uniformly random steps after the
    goal is first reached, so it never terminates (no row has ``terminated``; ``success`` marks the steps where the
    goal holds, and the last row is ``truncated``, as in Meta-World's data). The random draws come after all of
    the expert's, so the steps up to success are those of the same run without it."""
    domain = get_domain(env_id)
    env = make(env_id, level, encoder=encoder, pooling=pooling)
    tasks = list(domain.tasks[level])
    rows = new_rows()
    texts: dict[str, int] = {}
    for index in indices:
        expert = domain.expert()
        obs, info = env.reset(seed=episode_seed(seed, index), options={"task": tasks[index % len(tasks)]})
        instruction_id = texts.setdefault(info["instruction"], len(texts))
        noise = np.random.default_rng([seed, index])
        done, t, tail_end = False, 0, None
        while not done:
            if tail_end is None:
                action = expert(env)
                if epsilon and noise.random() < epsilon:
                    action = int(noise.integers(env.action_space.n))
            else:
                action = int(noise.integers(env.action_space.n))
            executed = action
            if domain.collect_action_noise:
                executed = np.clip(
                    action + domain.collect_action_noise * noise.standard_normal(np.shape(action)),
                    env.action_space.low,
                    env.action_space.high,
                ).astype(np.float32)
            next_obs, reward, terminated, truncated, info = env.step(executed)
            if steps_after_success:
                if tail_end is None and info["is_success"]:
                    tail_end = t + 1 + steps_after_success
                terminated, truncated = False, truncated or t + 1 == tail_end
            for key, value in (
                ("state", obs["state"]),
                ("next_state", next_obs["state"]),
                ("action", action),
                ("reward", reward),
                ("terminated", terminated),
                ("truncated", truncated),
                ("success", info["is_success"]),
                ("episode_id", index),
                ("step", t),
                ("task_id", tasks.index(info["task"])),
                ("instruction_id", instruction_id),
            ):
                rows[key].append(value)
            obs, done, t = next_obs, terminated or truncated, t + 1
    env.close()
    generator = {"kind": "expert", "seed": seed, "action_noise": domain.collect_action_noise}
    if epsilon:
        generator["epsilon"] = epsilon
    if steps_after_success:
        generator["steps_after_success"] = steps_after_success
    return build_dataset(env_id, level, env.instructions, rows, list(texts), "real", generator)


def new_rows() -> dict[str, list]:
    """Empty per-step columns, filled one step at a time by the producers of episodes."""
    return {key: [] for key in STEP_FIELDS}


def build_dataset(
    env_id: str,
    level: str,
    instructions: InstructionTable,
    rows: dict[str, list],
    texts: list[str],
    source: str,
    generator: dict[str, Any],
) -> EpisodeDataset:
    """An episode dataset from per-step columns; ``texts`` are the instructions the rows' ``instruction_id`` index."""
    domain = get_domain(env_id)
    embeddings = torch.from_numpy(
        np.stack([instructions.embedding(t) for t in texts])
    )  # never empty: a shard has episodes
    metadata = {
        "env_id": env_id,
        "level": level,
        "source": source,
        "encoder_id": instructions.encoder_id,
        "embedding_dim": instructions.dim,
        "state_dim": domain.state_dim,
        "action_kind": domain.action_kind,
        "num_actions": domain.num_actions,
        "action_dim": domain.action_dim,
        "tasks": list(domain.tasks[level]),
        "counts": {},
        "produced_by": {},
        "generator": generator,
        **domain.data_versions,
    }
    return EpisodeDataset(
        _stack_rows(rows, discrete=domain.action_kind == "discrete"), texts, embeddings.float(), metadata
    )


def _stack_rows(rows: dict[str, list], discrete: bool) -> TensorDict:
    dtypes = {
        "state": torch.float32,
        "next_state": torch.float32,
        "reward": torch.float32,
        "terminated": torch.bool,
        "truncated": torch.bool,
        "success": torch.bool,
        "action": torch.int64 if discrete else torch.float32,
    }
    columns = {
        key: torch.as_tensor(np.asarray(values), dtype=dtypes.get(key, torch.int64)) for key, values in rows.items()
    }
    return TensorDict(columns, batch_size=[len(rows["step"])])


def collect(
    env_id: str,
    level: str,
    episodes: int,
    out: str | Path,
    seed: int = 0,
    encoder: str = DEFAULT_ENCODER,
    pooling: str = "mean",
    shard_episodes: int = 250,
    overwrite: bool = False,
    progress: bool = True,
    wait: bool = False,
    workers: int = 1,
    epsilon: float = 0.0,
    steps_after_success: int = 0,
) -> Path:
    """Collect ``episodes`` expert episodes of ``level`` into the dataset directory ``out``.

    ``epsilon`` (discrete actions): a random action, taken and recorded, at that share of the steps, so the data
    show what actions the expert never takes do (a pick-up on an empty cell, a toggle of an open door).
    ``steps_after_success`` (discrete actions): each episode goes on for that many random steps after its goal is
    reached, never terminating, so the data show states the expert's episodes end on (an open door, toggled again).

    ``wait``: when another process is writing ``out``, wait for it and use what it wrote instead of
    failing; for collection on first use, where two runs may start at once. ``workers``: processes
    collecting shards at once; the dataset is the same for any number. They are spawned, so a script
    that calls this with ``workers > 1`` needs the usual ``if __name__ == "__main__":`` guard."""
    level = check_dataset_arguments(env_id, level, out, encoder, pooling, overwrite)
    check_at_least(1, {"--episodes": episodes, "--workers": workers})
    discrete = get_domain(env_id).action_kind == "discrete"
    for option, value, valid, requirement in (
        ("--epsilon", epsilon, 0 < epsilon <= 1, "0 < epsilon <= 1"),
        ("--steps-after-success", steps_after_success, steps_after_success > 0, "a count > 0"),
    ):
        if value and not (valid and discrete):  # random actions: only a discrete space has a uniform one
            raise UserInputError(f"{option}: needs a discrete action space and {requirement}, got {value} for {env_id}")
    config = {
        "env_id": env_id,
        "level": level,
        "episodes": episodes,
        "seed": seed,
        "encoder": encoder,
        "pooling": pooling,
        "shard_episodes": shard_episodes,
        **({"epsilon": epsilon} if epsilon else {}),
        **({"steps_after_success": steps_after_success} if steps_after_success else {}),
    }
    if workers > 1:
        instruction_table(env_id, level, encoder, pooling)  # encoded once here, not raced for by every worker
    produce = partial(
        run_expert_episodes,
        env_id,
        level,
        seed=seed,
        encoder=encoder,
        pooling=pooling,
        epsilon=epsilon,
        steps_after_success=steps_after_success,
    )  # picklable
    return write_sharded(
        produce, episodes, out, config, shard_episodes, f"collect {env_id} {level}", overwrite, progress, wait, workers
    )


DEFAULT_COLLECTION_SEED = 0
"""A level's default dataset is the same whichever run collects it first, whatever that run's seed."""


def collect_default(
    env_id: str,
    level: str,
    episodes: int,
    encoder: str = DEFAULT_ENCODER,
    pooling: str = "mean",
) -> Path:
    """Collect the default real dataset of ``level`` (:func:`default_dataset_dir`) on first use, the one
    place data is collected without an explicit ``--out``; a run started meanwhile waits, then uses it."""
    out = default_dataset_dir(env_id, "real", level)
    print(f"{out}: no real data yet; collecting {episodes} expert episodes of the {level} tasks (once)", flush=True)
    return collect(
        env_id,
        level,
        episodes,
        out,
        seed=DEFAULT_COLLECTION_SEED,
        encoder=encoder,
        pooling=pooling,
        progress=True,
        wait=True,
        workers=available_cores(),
    )


@dataclass(frozen=True)
class ExplorationData:
    """Expert episodes of the train tasks with random steps (``collect --epsilon --steps-after-success``), which a
    grounding config declares for dynamics prediction only and which are collected once, on first use, into
    :func:`exploration_dataset_dir`: the expert alone never shows what a pick-up on an empty cell or a second
    toggle of an open door does, and a grounded model that never saw it imagines those steps wrong."""

    episodes: int
    epsilon: float
    steps_after_success: int = 0
    seed: int = DEFAULT_COLLECTION_SEED

    def check(self, env_id: str) -> None:
        """Each field valid for ``env_id`` (random actions need a discrete action space), named on failure."""
        check_at_least(1, {"episodes": self.episodes})
        check_at_least(0, {"steps_after_success": self.steps_after_success, "seed": self.seed})
        if not 0 < self.epsilon <= 1:
            raise UserInputError(f"epsilon must lie in (0, 1], got {self.epsilon}")
        if get_domain(env_id).action_kind != "discrete":
            raise UserInputError(f"needs a discrete action space (random steps), and {env_id} has continuous actions")


def exploration_dataset_dir(env_id: str, data: ExplorationData, data_dir: str | Path | None = None) -> Path:
    """``<data root>/<env_id>/real-train-eps<ε>-after<k>``: next to the default real dataset of the train tasks."""
    train = default_dataset_dir(env_id, "real", "train", data_dir)
    return train.with_name(f"{train.name}-eps{data.epsilon:g}-after{data.steps_after_success}")


def collect_exploration_default(
    env_id: str, data: ExplorationData, encoder: str = DEFAULT_ENCODER, pooling: str = "mean"
) -> Path:
    """:func:`exploration_dataset_dir`, collected when missing; one collected with other settings (episodes, seed)
    is refused in one line and left as it is, so no model is grounded on data its config does not describe."""
    out = exploration_dataset_dir(env_id, data)
    wanted = {**asdict(data), "encoder": encoder, "pooling": pooling}
    if out.exists():
        made_by = read_json(out / "metadata.json", "produced_by", "config") or {}
        made_by = {"epsilon": 0.0, "steps_after_success": 0, **made_by}
        for field, value in wanted.items():
            if made_by.get(field) != value:
                raise DatasetError(
                    f"{out}: collected with {field} {made_by.get(field)!r}, the config asks for {value!r}; "
                    f"move it away to collect the config's data there"
                )
        return out
    print(
        f"{out}: no exploration data yet; collecting {data.episodes} episodes of the train tasks with random "
        f"steps (epsilon {data.epsilon:g}, {data.steps_after_success} after success) for dynamics (once)",
        flush=True,
    )
    return collect(
        env_id,
        "train",
        data.episodes,
        out,
        seed=data.seed,
        encoder=encoder,
        pooling=pooling,
        wait=True,
        workers=available_cores(),
        epsilon=data.epsilon,
        steps_after_success=data.steps_after_success,
    )


def check_dataset_arguments(
    env_id: str, level: str, out: str | Path, encoder: str, pooling: str, overwrite: bool
) -> str:
    """Check the options of a command that writes a dataset before it starts, so a bad one leaves
    nothing behind (no ``.partial`` directory); returns the canonical level."""
    with naming("--env"):
        get_domain(env_id)
    with naming("--level"):
        level = resolve_level(level)
    with naming("--encoder"):
        InstructionEncoder(encoder, pooling)  # type: ignore[arg-type]
    check_can_create(out, "--out")  # whether ``out`` may be replaced is decided under its lock (write_sharded)
    return level


def format_success_table(counts: dict[str, Any]) -> str:
    lines = [f"{'task':<16}{'episodes':>10}{'success':>10}"]
    for task, entry in counts["per_task"].items():
        lines.append(f"{task:<16}{entry['episodes']:>10}{entry['successes'] / entry['episodes']:>10.1%}")
    return "\n".join(lines)

"""Expert data collection: ``imaginebench collect``.

Episodes are spread evenly over the level's tasks and episode ``i`` is seeded from
``(seed, i)``, so the output depends only on the arguments. Work is written in shards, each
atomically; an interrupted run resumes from its last complete shard and the final dataset
appears (by rename) only when every shard is done.
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tensordict import TensorDict
from tqdm.auto import tqdm

from imaginebench.datasets import EpisodeDataset, concat_datasets, load_episodes, write_episodes
from imaginebench.instructions import DEFAULT_ENCODER
from imaginebench.levels import resolve_level
from imaginebench.registry import get_domain, make
from imaginebench.storage import atomic_write_text


def episode_seed(seed: int, index: int) -> int:
    """Independent, reproducible seed of episode ``index`` of a run seeded with ``seed``."""
    return int(np.random.SeedSequence([seed, index]).generate_state(1)[0])


def run_expert_episodes(env_id: str, level: str, indices: range, seed: int, encoder: str, pooling: str) -> EpisodeDataset:
    """Roll out the domain's expert for the given episode indices (tasks assigned round-robin)."""
    domain = get_domain(env_id)
    env = make(env_id, level, encoder=encoder, pooling=pooling)
    tasks = list(domain.tasks[level])
    rows: dict[str, list] = {k: [] for k in ("state", "next_state", "action", "reward", "terminated", "truncated", "success", "episode_id", "step", "task_id", "instruction_id")}
    texts: dict[str, int] = {}
    for index in indices:
        expert = domain.expert()
        obs, info = env.reset(seed=episode_seed(seed, index), options={"task": tasks[index % len(tasks)]})
        instruction_id = texts.setdefault(info["instruction"], len(texts))
        done, t = False, 0
        while not done:
            action = expert(env)
            next_obs, reward, terminated, truncated, info = env.step(action)
            for key, value in (
                ("state", obs["state"]), ("next_state", next_obs["state"]), ("action", action),
                ("reward", reward), ("terminated", terminated), ("truncated", truncated),
                ("success", info["is_success"]), ("episode_id", index), ("step", t),
                ("task_id", tasks.index(info["task"])), ("instruction_id", instruction_id),
            ):  # fmt: skip
                rows[key].append(value)
            obs, done, t = next_obs, terminated or truncated, t + 1
    env.close()
    steps = _stack_rows(rows, discrete=domain.action_kind == "discrete")
    text_list = list(texts)
    embeddings = torch.from_numpy(np.stack([env.instructions.embedding(t) for t in text_list]))  # indices is never empty
    metadata = {
        "env_id": env_id, "level": level, "source": "real", "encoder_id": env.instructions.encoder_id,
        "embedding_dim": env.instructions.dim, "state_dim": domain.state_dim, "action_kind": domain.action_kind,
        "num_actions": domain.num_actions, "action_dim": domain.action_dim, "tasks": tasks, "counts": {},
        "produced_by": {}, "generator": {"kind": "expert", "seed": seed},
    }  # fmt: skip
    return EpisodeDataset(steps, text_list, embeddings.float(), metadata)


def _stack_rows(rows: dict[str, list], discrete: bool) -> TensorDict:
    dtypes = {"state": torch.float32, "next_state": torch.float32, "reward": torch.float32,
              "terminated": torch.bool, "truncated": torch.bool, "success": torch.bool,
              "action": torch.int64 if discrete else torch.float32}  # fmt: skip
    columns = {key: torch.as_tensor(np.asarray(values), dtype=dtypes.get(key, torch.int64)) for key, values in rows.items()}
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
) -> Path:
    """Collect ``episodes`` expert episodes of ``level`` into the dataset directory ``out``."""
    level = resolve_level(level)
    get_domain(env_id)  # fail early on a bad id
    if episodes < 1:
        raise ValueError(f"collect: --episodes must be >= 1, got {episodes}")
    out = Path(out)
    if out.exists() and not overwrite:
        raise FileExistsError(f"collect: {out} already exists (pass --overwrite to replace it)")
    config = {"env_id": env_id, "level": level, "episodes": episodes, "seed": seed, "encoder": encoder, "pooling": pooling, "shard_episodes": shard_episodes}
    partial = out.parent / f".{out.name}.partial"
    config_file = partial / "config.json"
    if partial.exists() and (not config_file.is_file() or json.loads(config_file.read_text()) != config):
        shutil.rmtree(partial)  # a different run was interrupted here: restart cleanly
    partial.mkdir(parents=True, exist_ok=True)
    atomic_write_text(json.dumps(config), config_file)

    starts = range(0, episodes, shard_episodes)
    bar = tqdm(total=episodes, desc=f"collect {env_id} {level}", unit="ep", disable=not progress)
    shards = []
    for number, start in enumerate(starts):
        shard_dir = partial / f"shard-{number:05d}"
        if not shard_dir.exists():
            indices = range(start, min(start + shard_episodes, episodes))
            write_episodes(run_expert_episodes(env_id, level, indices, seed, encoder, pooling), shard_dir)
        shards.append(load_episodes(shard_dir))
        bar.update(min(shard_episodes, episodes - start))
    bar.close()
    produced_by = {"command": shlex.join(sys.argv), "config": config}
    write_episodes(concat_datasets(shards, {"produced_by": produced_by}), out)
    shutil.rmtree(partial)
    return out


def format_success_table(counts: dict[str, Any]) -> str:
    lines = [f"{'task':<16}{'episodes':>10}{'success':>10}"]
    for task, entry in counts["per_task"].items():
        lines.append(f"{task:<16}{entry['episodes']:>10}{entry['successes'] / entry['episodes']:>10.1%}")
    return "\n".join(lines)

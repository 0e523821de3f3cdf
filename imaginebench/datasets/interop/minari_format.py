"""Minari (Farama's offline-RL dataset standard, read by TorchRL's ``MinariExperienceReplay``, CORL and
others): one local Minari dataset per episode dataset, and back.

An episode of ``T`` steps becomes ``T + 1`` observations ``{"state", "instruction_embedding"}`` (the
states, then the last ``next_state``), ``T`` actions, rewards, terminations and truncations, and
``infos["is_success"]`` (``T + 1``: entry ``t + 1`` is the success after step ``t``; entry 0, the
reset, is ``False``). Each episode's metadata holds its ``instruction`` text, ``task`` and original
``episode_id``; the dataset's metadata holds ours under ``"imaginebench"`` (env, level, source,
encoder, tasks, generator, produced_by). Datasets live under minari's root, ``$MINARI_DATASETS_PATH``
(default ``~/.minari/datasets``), in minari's default HDF5 format: its arrow format rewrites the
dataset size after every episode, which makes an export quadratic in the number of episodes.
"""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import numpy as np

from imaginebench.datasets.episodes import DatasetError, EpisodeDataset
from imaginebench.datasets.interop.flat import (
    dataset_from_columns,
    episode_bounds,
    export_metadata,
    refuse_existing,
    require_chained,
    row_embeddings,
)
from imaginebench.errors import UserInputError

METADATA_KEY = "imaginebench"
SUCCESS_INFO = "is_success"
DATA_FORMAT = "hdf5"


def default_dataset_id(metadata: dict) -> str:
    """``imaginebench/<env_id>/<source>-<level>-v0``, e.g. ``imaginebench/BabyAI-v0/real-train-v0``."""
    return f"imaginebench/{metadata['env_id']}/{metadata['source']}-{metadata['level']}-v0"


def minari_dataset_dir(dataset_id: str) -> Path:
    """Where minari keeps ``dataset_id`` locally (it need not exist)."""
    from minari.dataset.minari_dataset import parse_dataset_id
    from minari.storage import get_dataset_path

    try:
        parse_dataset_id(dataset_id)
    except (ValueError, TypeError):  # minari 0.5 raises TypeError for an id without "-v<N>"
        raise UserInputError(f"{dataset_id!r}: not a Minari dataset id (namespace/name-v0)") from None
    return get_dataset_path(dataset_id)


def has_local_minari(dataset_id: str) -> bool:
    try:
        return (minari_dataset_dir(dataset_id) / "data").is_dir()
    except UserInputError:
        return False


def export_minari(dataset: EpisodeDataset, dataset_id: str | None = None, overwrite: bool = False) -> str:
    """Write ``dataset`` as the local Minari dataset ``dataset_id`` (default :func:`default_dataset_id`)."""
    import minari

    dataset_id = dataset_id or default_dataset_id(dataset.metadata)
    target = minari_dataset_dir(dataset_id)
    refuse_existing(target, overwrite)
    require_chained(dataset, "Minari")
    episodes = episode_bounds(dataset)
    buffers = list(_episode_buffers(dataset, episodes))
    task_id, instruction_id, episode_id = (
        dataset.steps[name].numpy()[episodes[:, 0]] for name in ("task_id", "instruction_id", "episode_id")
    )
    shutil.rmtree(target, ignore_errors=True)  # minari refuses an existing id; --overwrite was checked above
    try:
        with warnings.catch_warnings():  # minari asks for a code permalink, an e-mail address and an env spec
            warnings.filterwarnings("ignore", category=UserWarning, module="minari")
            created = minari.create_dataset_from_buffers(
                dataset_id,
                buffers,
                observation_space=_observation_space(dataset.metadata),
                action_space=_action_space(dataset.metadata),
                algorithm_name=str(dataset.metadata.get("generator", {}).get("kind", "unknown")),
                author="imaginebench",
                description=f"ImagineBench {dataset.source} episodes of {dataset.metadata['env_id']}, level {dataset.metadata['level']}",
                data_format=DATA_FORMAT,
            )
        created.storage.update_episode_metadata(
            {"episode_id": int(e), "task": dataset.tasks[t], "instruction": dataset.instruction_texts[i]}
            for e, t, i in zip(episode_id, task_id, instruction_id)
        )
        created.storage.update_metadata(
            {
                METADATA_KEY: export_metadata(
                    dataset, "minari", observation_keys=["state", "instruction_embedding"], success_info=SUCCESS_INFO
                )
            }
        )
    except BaseException:
        shutil.rmtree(target, ignore_errors=True)
        raise
    return dataset_id


def _observation_space(metadata: dict):
    from gymnasium import spaces

    def vector(size: int) -> spaces.Box:
        return spaces.Box(-np.inf, np.inf, (size,), np.float32)

    return spaces.Dict(
        {"state": vector(int(metadata["state_dim"])), "instruction_embedding": vector(int(metadata["embedding_dim"]))}
    )


def _action_space(metadata: dict):
    from gymnasium import spaces

    if metadata["action_kind"] == "discrete":
        return spaces.Discrete(int(metadata["num_actions"]))
    return spaces.Box(-np.inf, np.inf, (int(metadata["action_dim"]),), np.float32)


def _episode_buffers(dataset: EpisodeDataset, episodes: np.ndarray):
    from minari.data_collector.episode_buffer import EpisodeBuffer

    steps = {name: value.numpy() for name, value in dataset.steps.items()}
    embedding = row_embeddings(dataset)
    for start, end in episodes:
        with_last = np.r_[start:end, end - 1]
        yield EpisodeBuffer(
            observations={
                "state": np.concatenate([steps["state"][start:end], steps["next_state"][end - 1 : end]]),
                "instruction_embedding": embedding[with_last],
            },
            actions=steps["action"][start:end],
            rewards=steps["reward"][start:end],
            terminations=steps["terminated"][start:end],
            truncations=steps["truncated"][start:end],
            infos={SUCCESS_INFO: np.concatenate([[False], steps["success"][start:end]])},
        )


def load_minari(dataset_id: str) -> EpisodeDataset:
    """An episode dataset back from a local Minari dataset written by :func:`export_minari`."""
    import minari

    try:
        source = minari.load_dataset(dataset_id)
    except (FileNotFoundError, ValueError) as error:
        raise DatasetError(f"Minari dataset {dataset_id!r}: {error}") from None
    path = Path(source.storage.data_path)
    metadata = source.storage.metadata.get(METADATA_KEY)
    if not isinstance(metadata, dict):
        raise DatasetError(
            f"{path / 'metadata.json'}: field {METADATA_KEY!r} is missing (not written by `imaginebench export`)"
        )
    episodes = list(source.iterate_episodes())
    episode_metadata = list(source.storage.get_episode_metadata(source.episode_indices))
    lengths = np.array([len(episode) for episode in episodes])
    texts = list(dict.fromkeys(str(m["instruction"]) for m in episode_metadata))
    text_row, task_row = (
        {text: i for i, text in enumerate(texts)},
        {task: i for i, task in enumerate(metadata["tasks"])},
    )
    unknown = {str(m["task"]) for m in episode_metadata} - set(task_row)
    if unknown:
        raise DatasetError(f"{path}: episode metadata field 'task' has {sorted(unknown)}, not in the metadata's tasks")

    def per_step(values: list) -> np.ndarray:
        return np.repeat(np.asarray(values, dtype=np.int64), lengths)

    def joined(pick) -> np.ndarray:
        return np.concatenate([pick(episode) for episode in episodes])

    columns = {
        "state": joined(lambda e: e.observations["state"][:-1]),
        "next_state": joined(lambda e: e.observations["state"][1:]),
        "action": joined(lambda e: e.actions),
        "reward": joined(lambda e: e.rewards).astype(np.float32),
        "terminated": joined(lambda e: e.terminations).astype(bool),
        "truncated": joined(lambda e: e.truncations).astype(bool),
        "success": joined(lambda e: e.infos[SUCCESS_INFO][1:]).astype(bool),
        "episode_id": per_step([m["episode_id"] for m in episode_metadata]),
        "step": np.concatenate([np.arange(n) for n in lengths]),
        "task_id": per_step([task_row[str(m["task"])] for m in episode_metadata]),
        "instruction_id": per_step([text_row[str(m["instruction"])] for m in episode_metadata]),
    }
    row_embedding = joined(lambda e: e.observations["instruction_embedding"][:-1])
    table = np.zeros((len(texts), row_embedding.shape[1]), np.float32)
    table[columns["instruction_id"]] = row_embedding
    if not np.array_equal(table[columns["instruction_id"]], row_embedding):
        raise DatasetError(
            f"{path}: observation 'instruction_embedding' differs between episodes of one instruction text"
        )
    return dataset_from_columns(columns, texts, table, metadata, path)

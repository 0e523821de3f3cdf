"""Imaginary rollouts from a grounded language model: ``imaginebench imagine``.

Rollout ``i`` of a run: task ``i mod #tasks`` of the level, the env reset with seed
``episode_seed(seed, i)`` gives the first state and the instruction (as in ``collect``), and the
model generates the rest, stopping when the env's success check holds on a generated state or at
the env's horizon. Each step's reward is the env's ``imagined_rewards``: the real data's reward where the
generated states determine it (docs/datasets.md#imaginary-rewards). The same seeds let ``rollout-quality``
replay every rollout in the simulator.
Writing is sharded and resumable; the metadata records the checkpoint, its hyperparameters and the seed.
"""

from __future__ import annotations

import hashlib
import warnings
from pathlib import Path
from typing import Any, get_args

import torch

from imaginebench.checkpoints import read_lightning_checkpoint
from imaginebench.collect import build_dataset, check_dataset_arguments, episode_seed, new_rows
from imaginebench.datasets import EpisodeDataset
from imaginebench.datasets.episodes import metadata_field
from imaginebench.datasets.locations import default_dataset_dir, find_imaginary_dataset
from imaginebench.datasets.sharded import write_sharded
from imaginebench.errors import UserInputError, check_at_least
from imaginebench.instructions import DEFAULT_ENCODER
from imaginebench.levels import IMAGINED_LEVELS, resolve_level
from imaginebench.registry import get_domain, make
from imaginebench.shipped import CHECKPOINT_FILE, NextStateSource, ShippedModel, shipped_model
from imaginebench.storage import read_json


def load_grounded_model(checkpoint: str | Path, device: str = "cpu"):
    """A :class:`~modules.grounding.model.GroundingModule` from a ``ground`` checkpoint, in eval mode."""
    from modules.grounding.model import GroundingModule

    read_lightning_checkpoint(checkpoint, "--checkpoint")
    # A LoRA checkpoint leaves out the frozen backbone on purpose; on_load_checkpoint checks it.
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message="Found keys that are in the model state dict but not in the checkpoint"
        )
        try:
            module = GroundingModule.load_from_checkpoint(str(checkpoint), map_location=device)
        except ValueError as error:  # another module's checkpoint, or an adapter for another backbone
            raise UserInputError(f"--checkpoint {checkpoint}: {error}") from error
    return module.to(device).eval()


def file_sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def imagination_starts(
    envs: list, tasks: list[str], seed: int, chunk: range
) -> tuple[list[torch.Tensor], list[str], int]:
    """First states and instructions of rollouts ``chunk`` of a run (see the module docstring), one env each, and the
    seed of the chunk's sampling generator."""
    first_states, instructions = [], []
    for env, index in zip(envs, chunk):
        observation, info = env.reset(seed=episode_seed(seed, index), options={"task": tasks[index % len(tasks)]})
        first_states.append(torch.from_numpy(observation["state"]))
        instructions.append(info["instruction"])
    return first_states, instructions, episode_seed(seed, chunk.start)


def imagine_episodes(
    module,
    env_id: str,
    level: str,
    indices: range,
    seed: int,
    temperature: float,
    batch_size: int,
    encoder: str,
    pooling: str,
    generator_info: dict[str, Any],
    use_cache: bool = True,
    next_states: str = "rollout",
) -> EpisodeDataset:
    """Generate rollouts ``indices`` of a run (see the module docstring) as an episode dataset."""
    from modules.grounding.generation import imagine_rollouts

    tasks = list(get_domain(env_id).tasks[level])
    envs = [make(env_id, level, encoder=encoder, pooling=pooling) for _ in range(min(batch_size, len(indices)))]
    rows = new_rows()
    texts: dict[str, int] = {}
    for start in range(indices.start, indices.stop, batch_size):
        chunk = range(start, min(start + batch_size, indices.stop))
        first_states, instructions, sampling_seed = imagination_starts(envs, tasks, seed, chunk)
        generator = torch.Generator(module.device).manual_seed(sampling_seed)

        def goal_reached(row: int, states: torch.Tensor) -> bool:
            return bool(envs[row].success_flags(states.numpy())[-1])

        horizons = [env.horizon for env in envs[: len(chunk)]]  # per task in some domains
        batch = imagine_rollouts(
            module,
            instructions,
            torch.stack(first_states),
            goal_reached,
            horizons,
            temperature,
            generator,
            use_cache,
            next_states=next_states,
        )
        for row, index in enumerate(chunk):
            env, length = envs[row], int(batch.lengths[row])
            instruction_id = texts.setdefault(instructions[row], len(texts))
            states, actions = batch.states[row, : length + 1].numpy(), batch.actions[row, :length].numpy()
            rewards = env.imagined_rewards(states, actions, batch.success[row, : length + 1].numpy())
            for t in range(length):
                success = bool(batch.success[row, t + 1])
                for key, value in (
                    ("state", states[t]),
                    ("next_state", states[t + 1]),
                    ("action", actions[t]),
                    ("reward", rewards[t]),
                    ("terminated", success),
                    ("truncated", not success and t + 1 == env.horizon),
                    ("success", success),
                    ("episode_id", index),
                    ("step", t),
                    ("task_id", index % len(tasks)),
                    ("instruction_id", instruction_id),
                ):
                    rows[key].append(value)
    instructions_table = envs[0].instructions
    for env in envs:
        env.close()
    return build_dataset(env_id, level, instructions_table, rows, list(texts), "imaginary", generator_info)


def imagine(
    checkpoint: str | Path,
    env_id: str,
    level: str,
    rollouts: int,
    out: str | Path,
    seed: int = 0,
    temperature: float = 0.0,
    batch_size: int = 64,
    device: str = "cpu",
    encoder: str = DEFAULT_ENCODER,
    pooling: str = "mean",
    shard_episodes: int = 256,
    overwrite: bool = False,
    progress: bool = True,
    wait: bool = False,
    next_states: str = "rollout",
) -> Path:
    """Write ``rollouts`` imaginary rollouts of ``level`` into the dataset directory ``out``.

    ``wait``: as for :func:`imaginebench.collect.collect`. ``next_states``: as for
    :func:`~modules.grounding.generation.imagine_rollouts`."""
    level = check_dataset_arguments(env_id, level, out, encoder, pooling, overwrite)
    domain = get_domain(env_id)
    check_at_least(1, {"--rollouts": rollouts, "--batch-size": batch_size})
    check_at_least(0, {"--temperature": temperature})
    check_next_states(next_states)
    check_device(device)
    module = load_grounded_model(checkpoint, device)
    expected = domain.spec(module.env_spec.embedding_dim)
    if (module.env_spec.state_dim, module.env_spec.action_kind) != (expected.state_dim, expected.action_kind):
        raise UserInputError(
            f"--checkpoint {checkpoint} was grounded on states/actions {module.env_spec}, not on {env_id}'s {expected}"
        )
    config = {
        "checkpoint": str(checkpoint),
        "checkpoint_sha256": file_sha256(checkpoint),
        "env_id": env_id,
        "level": level,
        "rollouts": rollouts,
        "seed": seed,
        "temperature": temperature,
        "batch_size": batch_size,
        "encoder": encoder,
        "pooling": pooling,
        "shard_episodes": shard_episodes,
        "next_states": next_states,
    }
    generator_info = {
        "kind": "grounded-lm",
        "seed": seed,
        "temperature": temperature,
        "decoding": "sampled" if temperature > 0 else "greedy",
        "next_states": next_states,
        "checkpoint": str(checkpoint),
        "checkpoint_sha256": config["checkpoint_sha256"],
        "model": _json_safe(dict(module.hparams)),
    }

    def produce(indices: range) -> EpisodeDataset:
        return imagine_episodes(
            module,
            env_id,
            level,
            indices,
            seed,
            temperature,
            batch_size,
            encoder,
            pooling,
            generator_info,
            next_states=next_states,
        )

    return write_sharded(
        produce, rollouts, out, config, shard_episodes, f"imagine {env_id} {level}", overwrite, progress, wait
    )


def check_next_states(next_states: str) -> None:
    if next_states not in get_args(NextStateSource):
        raise UserInputError(f"--next-states {next_states!r}: valid: {', '.join(get_args(NextStateSource))}")


def check_device(device: str) -> None:
    """``--device`` names a device torch knows and this machine has."""
    try:
        kind = torch.device(device).type
    except RuntimeError as error:
        raise UserInputError(f"--device {device!r}: {error}") from None
    if kind == "cuda" and not torch.cuda.is_available():
        raise UserInputError(f"--device {device!r}: CUDA is not available on this machine")


def _json_safe(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    return value if isinstance(value, (str, int, float, bool, type(None))) else str(value)


def find_or_imagine(env_id: str, level: str, data_dir: str | Path | None = None) -> Path | None:
    """The imaginary dataset of ``env_id`` at ``level`` (:func:`find_imaginary_dataset`); when there is none and
    the env ships a grounded model, imagined from it into the data root first. ``None`` when neither."""
    level = resolve_level(level)
    found = find_imaginary_dataset(env_id, level, data_dir)
    out = default_dataset_dir(env_id, "imaginary", level, data_dir)
    model = shipped_model(env_id) if level in IMAGINED_LEVELS else None
    if found == out and model is not None:
        found = None if set_aside_if_stale(out, env_id, level, model) else found
    if found is not None or model is None:
        return found
    print(
        f"{out}: no imaginary data of {env_id} level {level!r} yet; imagining {model.rollouts[level]} rollouts "
        f"(seed {model.seed}, temperature {model.temperature}, next states from the {model.next_states}) with the shipped "
        f"grounded model {model.checkpoint} on the CPU (once)",
        flush=True,
    )
    return imagine(
        model.checkpoint,
        env_id,
        level,
        model.rollouts[level],
        out,
        seed=model.seed,
        temperature=model.temperature,
        device="cpu",
        next_states=model.next_states,
        progress=True,
        wait=True,
    )


def unused_name(path: Path) -> Path:
    """``path``, or the first of ``path-2``, ``path-3``, ... that does not exist: data set aside twice under the same
    checkpoint and reward (new settings, new states) keep both copies instead of failing on the second rename."""
    candidate, number = path, 1
    while candidate.exists():
        number += 1
        candidate = path.with_name(f"{path.name}-{number}")
    return candidate


def set_aside_if_stale(path: Path, env_id: str, level: str, model: ShippedModel) -> bool:
    """Renames data the commands imagined from an earlier shipped model (its checkpoint or settings differ from
    what ``assets/`` ships now) or under an earlier reward or states of the env to
    ``<path>.stale-<sha>-r<reward version>`` (``-2``, ``-3``, ... when taken), with a line saying so; True when it
    did. Data a user imagined from a checkpoint of their own are theirs and stay. Nothing is deleted."""
    metadata = read_json(path / "metadata.json") or {}
    generator = metadata.get("generator") or {}
    if Path(str(generator.get("checkpoint", ""))).parts[-2:] != (env_id, CHECKPOINT_FILE):
        return False
    versions = get_domain(env_id).data_versions
    made_with = [generator.get("checkpoint_sha256"), generator.get("seed"), generator.get("temperature")]
    made_with += [generator.get("next_states", "rollout"), (metadata.get("counts") or {}).get("episodes")]
    made_with += [metadata_field(metadata, name) for name in versions]
    shipped = [file_sha256(model.checkpoint), model.seed, model.temperature, model.next_states, model.rollouts[level]]
    if made_with == [*shipped, *versions.values()]:
        return False
    reward_version = metadata_field(metadata, "reward_version")
    stale = unused_name(
        path.with_name(f"{path.name}.stale-{str(generator.get('checkpoint_sha256'))[:8]}-r{reward_version}")
    )
    print(
        f"{path}: imagined from an earlier shipped model or its earlier settings, reward or states; moved to {stale} "
        "and imagined anew",
        flush=True,
    )
    try:
        path.rename(stale)
    except FileNotFoundError:  # another process of the same run (DDP) moved it first
        pass
    return True

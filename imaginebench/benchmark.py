"""The benchmark API of the original ImagineBench: ``imaginebench.make(env_id, level)`` gives an env whose
``get_dataset()`` returns the level's real and imaginary data as padded arrays.

An entry point like the commands: finding a level's data may collect real episodes or run the env's shipped
grounded model, so this module sits above every layer and the envs themselves know nothing of datasets.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import gymnasium as gym
import numpy as np

from imaginebench.levels import resolve_level
from imaginebench.registry import env_ids, get_domain
from imaginebench.registry import make as make_env

if TYPE_CHECKING:
    from imaginebench.datasets.episodes import EpisodeDataset

Arrays = dict[str, np.ndarray]


class BenchmarkEnv(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """A benchmark env with the original's ``get_dataset``; every other attribute is the env's own.

    It is the outermost wrapper of ``gymnasium.make("imaginebench/<env_id>")`` too: gymnasium 1.x wrappers
    forward no attributes, so ``gymnasium.make(...).get_dataset()`` would fail on ``OrderEnforcing``; this
    keeps gymnasium's usual stack (env checker included) and leaves reset and step alone.
    """

    def __init__(self, env: gym.Env) -> None:
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.Wrapper.__init__(self, env)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "env":
            raise AttributeError(name)
        return getattr(self.env.unwrapped, name)

    def get_dataset(self, level: str | None = None, data_dir: str | None = None) -> tuple[Arrays, Arrays | None]:
        """``(real, imaginary)`` padded arrays of this env's level (or ``level``): :func:`get_dataset`."""
        env = self.env.unwrapped
        return get_dataset(env.env_id, level or env.level, env.instructions.encoder_id, data_dir=data_dir)


def make(env_id: str, level: str = "train", task: str | None = None, **options: Any) -> BenchmarkEnv:
    """Create a benchmark env for one level (optionally one task), with ``get_dataset``; ``options`` are those of
    :func:`imaginebench.registry.make` (``encoder``, ``pooling``, the domain env's own keywords such as
    ``render_mode``). Attributes are read from the domain's env (``env.unwrapped`` is that env itself). ``gymnasium.make("imaginebench/<env_id>", level=...)`` gives the same env inside gymnasium's
    usual wrappers."""
    return BenchmarkEnv(make_env(env_id, level, task, **options))


def get_dataset(
    env_id: str, level: str, encoder_id: str, data_dir: str | Path | None = None
) -> tuple[Arrays, Arrays | None]:
    """``(real, imaginary)``: real train-level data plus the level's imaginary rollouts (``None`` for
    the train level, or with a line naming the commands that make them when there are none).

    The real data are ``<root>/<env_id>/real-train``, collected there on first use when that is
    the default location (:func:`collect_default_real`). The imaginary data are the data root's
    own rollouts if any, else ones shipped in ``assets/``, else imagined once into the data root
    from the env's shipped grounded model (:func:`~imaginebench.commands.imagine.find_or_imagine`). Both
    must have been made for this env, level and instruction encoder: mixing another's rows would
    silently train on wrong embeddings or states.
    """
    from imaginebench.commands.imagine import find_or_imagine  # here: `import imaginebench` stays light
    from imaginebench.datasets.legacy import to_padded_arrays
    from imaginebench.datasets.locations import default_dataset_dir
    from imaginebench.shipped import missing_imaginary_data

    level = resolve_level(level)
    real_dir = default_dataset_dir(env_id, "real", "train", data_dir)
    if not real_dir.exists():
        collect_default_real(env_id, encoder_id, real_dir)
    real = to_padded_arrays(_load_checked(real_dir, env_id, "train", "real", encoder_id))
    imaginary_dir = None if level == "train" else find_or_imagine(env_id, level, data_dir)
    if imaginary_dir is None:
        if level != "train":  # an env without a shipped model (yet): say how its data are made
            print(f"get_dataset: {missing_imaginary_data(env_id, level, data_dir)}", flush=True)
        return real, None
    return real, to_padded_arrays(_load_checked(imaginary_dir, env_id, level, "imaginary", encoder_id))


def collect_default_real(env_id: str, encoder_id: str, real_dir: Path) -> None:
    """Collect the env's default number of expert episodes into ``real_dir``, the default real
    dataset; any other missing directory is an error naming it (a typo must not start a long collection)."""
    from imaginebench.collect import collect_default
    from imaginebench.datasets.locations import default_dataset_dir
    from imaginebench.instructions.encoder import encoder_arguments

    default = default_dataset_dir(env_id, "real", "train")
    if real_dir.resolve() != default.resolve():
        raise FileNotFoundError(
            f"{real_dir}: no real data (only the default {default} is collected on first use); "
            f"create it with `imaginebench collect --env {env_id} --level train --episodes N --out {real_dir}`"
        )
    model, pooling = encoder_arguments(encoder_id)
    collect_default(env_id, "train", get_domain(env_id).real_episodes, model, pooling)  # into real_dir


def _load_checked(path: Path, env_id: str, level: str, source: str, encoder_id: str) -> EpisodeDataset:
    from imaginebench.datasets.episodes import check_metadata, load_episodes

    dataset = load_episodes(path)
    expected = {**get_domain(env_id).expected_metadata(source, encoder_id), "level": level}
    check_metadata(dataset, expected, f"get_dataset of {env_id} level {level!r}")
    return dataset


def register_gymnasium_envs() -> None:
    for env_id in env_ids():
        gym_id = f"imaginebench/{env_id}"
        if gym_id not in gym.registry:
            gym.register(
                gym_id,
                entry_point=make_env,
                kwargs={"env_id": env_id},
                additional_wrappers=(BenchmarkEnv.wrapper_spec(),),
            )

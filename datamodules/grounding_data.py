"""Real episodes → batches of KALM grounding examples (rollout generation, dynamics, consequence,
explanation), mixed by configurable task weights."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from lightning.pytorch import LightningDataModule
from torch.utils.data import DataLoader

from datamodules.grounding_prompts import GROUNDING_TASKS, PROMPT_WORDS, Example, words
from datamodules.offline_data import TRAIN_STREAM, VALIDATION_STREAM, EpochBatches, as_is
from datamodules.real_data import prepare_real_data, real_dataset_paths
from datamodules.statistics import change_scale, mean_and_std
from imaginebench.collect import ExplorationData, collect_exploration_default, exploration_dataset_dir
from imaginebench.datasets import DatasetError, check_metadata, concat_datasets, dataset_exists, open_dataset
from imaginebench.datasets.episodes import episode_row_ranges
from imaginebench.errors import UserInputError, check_at_least, naming
from imaginebench.instructions import DEFAULT_ENCODER, InstructionEncoder
from imaginebench.levels import LEVELS
from imaginebench.registry import get_domain

DEFAULT_TASK_WEIGHTS = {task: 1.0 for task in GROUNDING_TASKS}
WINDOWED_TASKS = ("generation", "explanation")
"""Tasks that read a whole rollout, so with ``window_steps`` read a window of it (dynamics reads one
transition; consequence pairs the first state with the final one, which no window holds)."""


@dataclass(frozen=True)
class Rollout:
    """One episode as plain tensors: states ``(T + 1, S)``, actions ``(T, …)``, its instruction and task."""

    states: torch.Tensor
    actions: torch.Tensor
    instruction: str
    task: str
    success: bool


def episode_rollouts(dataset) -> list[Rollout]:
    """Split a dataset's steps (contiguous per episode) into rollouts."""
    steps = dataset.steps
    state, next_state, action = steps["state"].clone(), steps["next_state"].clone(), steps["action"].clone()
    instruction_id, task_id, success = (
        steps["instruction_id"].tolist(),
        steps["task_id"].tolist(),
        steps["success"].tolist(),
    )
    return [
        Rollout(
            torch.cat([state[start:end], next_state[end - 1 : end]]),
            action[start:end],
            dataset.instruction_texts[instruction_id[start]],
            dataset.tasks[task_id[start]],
            bool(success[end - 1]),
        )
        for start, end in episode_row_ranges(steps)
    ]


def rollout_window(
    states: torch.Tensor, actions: torch.Tensor, window_steps: int | None, rng: np.random.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """A random window of at most ``window_steps`` steps of a longer rollout (states ``(k + 1, S)``,
    actions ``(k, …)``); a rollout that fits is returned whole, and with ``None`` nothing is drawn.

    The start is uniform over ``[1 - W, T - 1]`` and the window clipped to the rollout, so every step,
    the first and the goal-reaching last included, lies in exactly W of the T + W − 1 windows: each part
    of an episode is trained as often as the others, as with whole rollouts. (Full windows, starts in
    ``[0, T − W]``, would reach the last step in only one of T − W + 1.) A window's prompt is the generation prompt
    itself, goal and ``Rollout:`` then its first state, with no mid-episode marker: the model conditions
    on the state, the windows that start at s₀ need no template of their own, and a new prompt word would
    change a word-level vocabulary (and so a from-config model's initialisation) for unwindowed runs too.
    Imagination rebuilds its context with this same template (:func:`~modules.grounding.generation.imagine_rollouts`)."""
    steps = len(actions)
    if window_steps is None or steps <= window_steps:
        return states, actions
    start = int(rng.integers(1 - window_steps, steps))
    first, last = max(start, 0), min(start + window_steps, steps)
    return states[first : last + 1], actions[first:last]


class GroundingDataModule(LightningDataModule):
    """Serves lists of :class:`Example` (the module turns them into token/slot batches, because the
    tokenizer belongs to the backbone). A fixed ``val_fraction`` of the episodes is held out, by
    episode, for validation losses and the explanation accuracy. Epoch ``e`` on rank ``r`` draws
    from the seed ``(seed, r, TRAIN_STREAM, e)``, as the offline RL data does."""

    def __init__(
        self,
        env_id: str = "BabyAI-v0",
        real: list[str] = [],
        real_levels: list[str] = [],
        max_episodes: int | None = None,
        task_weights: dict[str, float] | None = None,
        batch_size: int = 32,
        batches_per_epoch: int = 200,
        val_fraction: float = 0.05,
        val_batches: int = 4,
        seed: int = 0,
        encoder: str = DEFAULT_ENCODER,
        collect_if_missing: int = 0,
        window_steps: int | None = None,
        dynamics_real: list[str] = [],
        dynamics_collect: ExplorationData | None = None,
    ) -> None:
        """``real``: dataset directories, which must exist; ``real_levels``: also the default real dataset
        of these levels, collected on first use with ``collect_if_missing`` episodes (as
        :class:`~datamodules.offline_data.OfflineDataModule`; the shipped configs ground on ``[train]``).
        ``max_episodes``: use at most this many episodes (the first ones). ``task_weights``: relative
        frequency of each grounding task (default: equal, as KALM). ``window_steps`` W: generation and
        explanation examples of a rollout longer than W steps read a window of it (:func:`rollout_window`),
        so long horizons ground at the cost of W steps; LightningCLI links it into the model, whose
        imagination slides its context by it. ``None``: whole rollouts. ``dynamics_real``: dataset directories whose
        transitions train dynamics prediction only, drawn with the real training rollouts in proportion to their
        number: data whose actions are not behaviour to imitate (``imaginebench collect --epsilon``'s random
        steps), held out of validation. ``dynamics_collect``: one more such dataset, declared by its collection
        settings and collected on first use (:class:`~imaginebench.collect.ExplorationData`), so a config's
        grounding recipe runs from a fresh clone."""
        super().__init__()
        with naming("data.env_id"):
            get_domain(env_id)
        if dynamics_collect is not None:
            with naming("data.dynamics_collect"):
                dynamics_collect.check(env_id)
        weights = dict(DEFAULT_TASK_WEIGHTS if task_weights is None else task_weights)
        unknown = set(weights) - set(GROUNDING_TASKS)
        if unknown or not weights or min(weights.values()) < 0 or sum(weights.values()) <= 0:
            raise UserInputError(
                f"data.task_weights must give non-negative weights (not all 0) to tasks among {GROUNDING_TASKS}, got {weights}"
            )
        if not 0 < val_fraction < 1:
            raise UserInputError(f"data.val_fraction must be in (0, 1), got {val_fraction}")
        check_at_least(
            1,
            {
                "data.batch_size": batch_size,
                "data.batches_per_epoch": batches_per_epoch,
                "data.val_batches": val_batches,
                "data.window_steps": window_steps,
            },
        )
        self.save_hyperparameters()
        self.env_id = env_id
        if not real and not real_levels:
            raise UserInputError("data.real and data.real_levels are both empty: grounding needs real episodes")
        self.real = [str(p) for p in real]
        self.real_levels = list(real_levels)
        self.dynamics_real = [str(p) for p in dynamics_real]
        self.dynamics_collect = dynamics_collect
        self.task_names = [t for t in GROUNDING_TASKS if weights.get(t, 0) > 0]
        self.task_probabilities = np.array([weights[t] for t in self.task_names]) / sum(
            weights[t] for t in self.task_names
        )
        self.encoder = encoder
        self.train_rollouts: list[Rollout] = []
        self.val_rollouts: list[Rollout] = []
        self.dynamics_rollouts: list[Rollout] = []
        self._rank = 0
        self._epochs_started = 0

    @property
    def env_spec(self) -> dict:
        return get_domain(self.env_id).spec(InstructionEncoder(self.encoder).dim).to_dict()

    @property
    def vocabulary(self) -> list[str]:
        """The words of the prompts and of every instruction of every level, for a word-level
        tokenizer: novel goals' words get embeddings too (untrained ones, if only novel goals use them)."""
        texts = [PROMPT_WORDS] + [text for level in LEVELS for text in get_domain(self.env_id).instruction_texts(level)]
        return sorted({word for text in texts for word in words(text)})

    def prepare_data(self) -> None:
        prepare_real_data(self.env_id, self.real, self.real_levels, self.hparams.collect_if_missing, self.encoder)
        for path in self.dynamics_real:
            if not dataset_exists(path):
                raise DatasetError(
                    f"data.dynamics_real: {path} is neither a dataset directory nor a local Minari dataset id"
                )
        if self.dynamics_collect is not None:
            with naming("data.dynamics_collect"):
                collect_exploration_default(self.env_id, self.dynamics_collect, self.encoder)

    @property
    def dynamics_paths(self) -> list[str]:
        """``dynamics_real``, then the directory of ``dynamics_collect`` (collected by :meth:`prepare_data`)."""
        collected = (
            [] if self.dynamics_collect is None else [exploration_dataset_dir(self.env_id, self.dynamics_collect)]
        )
        return [*self.dynamics_real, *map(str, collected)]

    def setup(self, stage: str | None = None) -> None:
        if self.train_rollouts:
            return
        datasets = [open_dataset(path) for path in real_dataset_paths(self.env_id, self.real, self.real_levels)]
        for dataset in datasets:
            check_metadata(dataset, {"env_id": self.env_id}, "data.real or data.real_levels lists it")
        rollouts = episode_rollouts(concat_datasets(datasets))[: self.hparams.max_episodes]
        order = np.random.default_rng(self.hparams.seed).permutation(len(rollouts))
        num_val = max(1, int(round(self.hparams.val_fraction * len(rollouts))))
        if len(rollouts) - num_val < 1:
            raise DatasetError(f"data.real: {len(rollouts)} episodes are too few to hold out {num_val} for validation")
        self.val_rollouts = [rollouts[i] for i in order[:num_val]]
        self.train_rollouts = [rollouts[i] for i in order[num_val:]]
        if self.dynamics_paths:
            dynamics = [open_dataset(path) for path in self.dynamics_paths]
            for dataset in dynamics:
                check_metadata(dataset, {"env_id": self.env_id}, "data.dynamics_real or data.dynamics_collect")
            self.dynamics_rollouts = episode_rollouts(concat_datasets(dynamics))
        self._rank = self.trainer.global_rank if self.trainer is not None else 0

    def state_statistics(self, min_std: float = 1e-3) -> tuple[torch.Tensor, torch.Tensor]:
        """Mean and standard deviation of the training rollouts' states (the model standardises states)."""
        return mean_and_std(torch.cat([r.states for r in self.train_rollouts]), min_std)

    def state_change_scale(self, tolerance: float = 0.0) -> torch.Tensor:
        """The typical per-step change of each state dimension in the training rollouts (:func:`change_scale`)."""
        return change_scale(torch.cat([r.states.diff(dim=0) for r in self.train_rollouts]), tolerance)

    def _examples(
        self, rollouts: list[Rollout], rng: np.random.Generator, count: int, dynamics_extra: list[Rollout] = []
    ) -> list[Example]:
        chosen = rng.integers(len(rollouts), size=count)
        tasks = rng.choice(len(self.task_names), size=count, p=self.task_probabilities)
        examples = []
        for index, task in zip(chosen.tolist(), tasks.tolist()):
            rollout, name = rollouts[index], self.task_names[task]
            if name == "dynamics" and dynamics_extra:
                pick = int(rng.integers(len(rollouts) + len(dynamics_extra)))
                rollout = rollouts[pick] if pick < len(rollouts) else dynamics_extra[pick - len(rollouts)]
            step = int(rng.integers(len(rollout.actions)))
            states, actions = rollout.states, rollout.actions
            if name in WINDOWED_TASKS:
                states, actions = rollout_window(states, actions, self.hparams.window_steps, rng)
            examples.append(Example(name, rollout.instruction, states, actions, step))
        return examples

    def _batches(
        self, rollouts: list[Rollout], seed: tuple[int, ...], count: int, dynamics_extra: list[Rollout] = []
    ) -> Iterator[list[Example]]:
        rng = np.random.default_rng(list(seed))
        for _ in range(count):
            yield self._examples(rollouts, rng, self.hparams.batch_size, dynamics_extra)

    def _epoch(self) -> Iterator[list[Example]]:
        seed = (self.hparams.seed, self._rank, TRAIN_STREAM, self._epochs_started)
        self._epochs_started += 1
        return self._batches(self.train_rollouts, seed, self.hparams.batches_per_epoch, self.dynamics_rollouts)

    def train_dataloader(self) -> DataLoader:
        return DataLoader(EpochBatches(self._epoch, self.hparams.batches_per_epoch), batch_size=None, collate_fn=as_is)

    def val_dataloader(self) -> DataLoader:
        def batches() -> Iterator[list[Example]]:
            return self._batches(
                self.val_rollouts, (self.hparams.seed, self._rank, VALIDATION_STREAM), self.hparams.val_batches
            )

        return DataLoader(EpochBatches(batches, self.hparams.val_batches), batch_size=None, collate_fn=as_is)

    def state_dict(self) -> dict[str, Any]:
        return {"epochs_started": self._epochs_started}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self._epochs_started = int(state_dict["epochs_started"])

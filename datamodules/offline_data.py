"""Real and imaginary episode datasets → mixed transition batches for offline RL."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import torch
from lightning.pytorch import LightningDataModule
from lightning.pytorch.utilities import rank_zero_info
from tensordict import TensorDict
from torch.utils.data import DataLoader, IterableDataset

from datamodules.mixing import MixedSampler, MixMode, check_mix
from datamodules.real_data import prepare_real_data, real_dataset_paths
from datamodules.statistics import mean_and_std
from imaginebench.datasets import (
    DatasetError,
    EpisodeDataset,
    Transitions,
    check_metadata,
    concat_datasets,
    open_dataset,
    to_transitions,
)
from imaginebench.errors import UserInputError, check_at_least, naming
from imaginebench.instructions import DEFAULT_ENCODER, InstructionEncoder
from imaginebench.instructions.encoder import Pooling
from imaginebench.levels import resolve_level
from imaginebench.registry import get_domain
from imaginebench.rollout_quality import ROLLOUT_CHECKS, RolloutCheck
from imaginebench.shipped import imaginary_dataset_dir
from imaginebench.storage import read_json

TRAIN_STREAM, VALIDATION_STREAM, TEST_STREAM = 0, 1, 2
"""Tags in the sampler seed ``(seed, rank, stream, ...)``: loss diagnostics never share training's batches."""


class EpochBatches(IterableDataset):
    """One epoch of ready batches, served by ``DataLoader(batch_size=None, collate_fn=as_is)``."""

    def __init__(self, epoch: Callable[[], Iterator[TensorDict]], num_batches: int) -> None:
        self.epoch = epoch
        self.num_batches = num_batches

    def __iter__(self) -> Iterator[TensorDict]:
        return self.epoch()

    def __len__(self) -> int:
        return self.num_batches


def storage_device_of(name: str) -> torch.device:
    """``data.storage_device`` as a torch device, or a one-line error naming it."""
    try:
        device = torch.device(name)
    except RuntimeError as error:
        raise UserInputError(f"data.storage_device: {name!r} is not 'auto' or a torch device ({error})") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise UserInputError(f"data.storage_device: {name!r}, but torch sees no CUDA device here")
    return device


def as_is(batch: TensorDict) -> TensorDict:
    """The DataLoader's default conversion would unpack a TensorDict as a Mapping into a dict."""
    return batch


class OfflineDataModule(LightningDataModule):
    """Loads real (and optional imaginary) datasets of one env and serves mixed batches.

    Batches hold ``state``, ``instruction_embedding``, ``action``, ``task_id``, ``next`` {``state``,
    ``instruction_embedding``, ``reward``, ``terminated``, ``truncated``, ``done``} and ``source``
    (see :mod:`datamodules.mixing`). ``task_id`` indexes :attr:`tasks`: the real tasks first, then
    tasks only the imaginary data has. Real data (``real`` and ``real_levels``) may be absent only with ``mix_ratio_real=0``.

    Epoch ``e`` on rank ``r`` is drawn from the seed ``(seed, r, TRAIN_STREAM, e)``: ranks never share a stream,
    and a run resumed from an end-of-epoch checkpoint draws exactly the batches it would have drawn.
    """

    def __init__(
        self,
        env_id: str,
        real: list[str] = [],
        imaginary: list[str] = [],
        imaginary_levels: list[str] = [],
        mix_mode: MixMode = "ratio",
        mix_ratio_real: float = 0.5,
        batch_size: int = 256,
        batches_per_epoch: int = 1000,
        seed: int = 0,
        encoder: str = DEFAULT_ENCODER,
        pooling: Pooling = "mean",
        real_levels: list[str] = [],
        collect_if_missing: int = 0,
        evaluation_batches: int = 4,
        imaginary_filter: list[RolloutCheck] = [],
        storage_device: str = "cpu",
    ) -> None:
        """``real``: real dataset directories, which must exist. ``real_levels``: also load the default
        real dataset of these levels (``<data root>/<env_id>/real-<level>``), collected there on first
        use with ``collect_if_missing`` episodes (in :meth:`prepare_data`; ``0``: never collect).

        ``imaginary_levels``: also load the default imaginary data of these levels (e.g. ``[rephrase,
        easy, hard]``), found by :func:`~imaginebench.shipped.imaginary_dataset_dir`: the data root's
        own rollouts if there are any, else ones shipped in ``assets/``. ``imaginebench fit`` imagines
        a missing level once into the data root from the env's shipped grounded model before training
        (:func:`imaginebench.commands.imagine.find_or_imagine`; this layer never runs a language model).

        ``imaginary_filter``: drop imaginary rollouts that fail any of these checks (replayed in
        the simulator, :mod:`imaginebench.rollout_quality`): ``goal`` (the goal check never holds),
        ``transitions`` (a generated next state the simulator does not reach: any drift), ``legal``
        (a state the env cannot be in, within its state tolerance). Whether filtering helps is one of
        ImagineBench's open questions.

        ``storage_device``: where the transitions are kept and batches gathered: ``cpu``, ``auto`` (the trainer's
        device: on a GPU only the drawn indices cross from the host) or a torch device (``cuda:0``). The batches
        are the same on every device (:class:`~datamodules.mixing.SourceBuffer`)."""
        super().__init__()
        with naming("data.env_id"):
            get_domain(env_id)
        with naming("data.imaginary_levels"):
            for level in imaginary_levels:
                resolve_level(level)
        unknown = set(imaginary_filter) - set(ROLLOUT_CHECKS)
        if unknown:
            raise UserInputError(
                f"data.imaginary_filter: unknown checks {sorted(unknown)}; valid: {', '.join(ROLLOUT_CHECKS)}"
            )
        check_at_least(1, {"data.batch_size": batch_size, "data.batches_per_epoch": batches_per_epoch})
        check_at_least(
            0, {"data.evaluation_batches": evaluation_batches, "data.collect_if_missing": collect_if_missing}
        )
        check_mix(
            mix_mode,
            mix_ratio_real,
            has_real=bool(real or real_levels),
            has_imaginary=bool(imaginary or imaginary_levels),
            prefix="data.",
        )
        self._fixed_storage_device = None if storage_device == "auto" else storage_device_of(storage_device)
        self.save_hyperparameters()
        self.env_id = env_id
        self.real = list(real)
        self.imaginary = list(imaginary)
        self.imaginary_levels = list(imaginary_levels)
        self.mix_mode = mix_mode
        self.mix_ratio_real = mix_ratio_real
        self.batch_size = batch_size
        self.batches_per_epoch = batches_per_epoch
        self.seed = seed
        self.encoder = encoder
        self.pooling = pooling
        self.real_levels = list(real_levels)
        self.collect_if_missing = collect_if_missing
        self.evaluation_batches = evaluation_batches
        with naming("data.encoder"):
            self.instruction_encoder = InstructionEncoder(encoder, pooling)
        self.real_dataset: EpisodeDataset | None = None
        self.imaginary_dataset: EpisodeDataset | None = None
        self.dataset_paths: dict[str, list[str | None]] = {}
        """The datasets setup loaded, per source, and for each imaginary one the sha256 of the grounded model it was
        imagined from (``imaginary_checkpoints``), where its next states were read (``imaginary_next_states``;
        ``None``: no grounded model's), its decoding temperature (``imaginary_temperatures``; 0: greedy) and its
        rollouts (``imaginary_episodes``); recorded in results.json."""
        self.real_tasks: list[str] = []
        self.tasks: list[str] = []
        self.sampler: MixedSampler | None = None
        self._rank = 0
        self._epochs_started = 0

    @property
    def env_spec(self) -> dict:
        """The algorithm's network dimensions, known before any data is loaded (LightningCLI links it)."""
        return get_domain(self.env_id).spec(self.instruction_encoder.dim).to_dict()

    def prepare_data(self) -> None:
        prepare_real_data(self.env_id, self.real, self.real_levels, self.collect_if_missing, self.encoder, self.pooling)

    def setup(self, stage: str | None = None) -> None:
        if self.sampler is not None:
            return
        self.dataset_paths = {
            "real": real_dataset_paths(self.env_id, self.real, self.real_levels),
            "imaginary": self.imaginary + self._default_imaginary(),
        }
        self.real_dataset = self._load("real", self.dataset_paths["real"])
        self.imaginary_dataset = self._load("imaginary", self.dataset_paths["imaginary"])
        made_of = {
            "imaginary_checkpoints": ("generator", "checkpoint_sha256"),
            "imaginary_next_states": ("generator", "next_states"),
            "imaginary_temperatures": ("generator", "temperature"),
            "imaginary_episodes": ("counts", "episodes"),
        }
        for record, keys in made_of.items():  # a path like data/<env>/imaginary-easy outlives its model and size
            self.dataset_paths[record] = [
                read_json(Path(path) / "metadata.json", *keys) for path in self.dataset_paths["imaginary"]
            ]
        self.real_tasks = self.real_dataset.tasks if self.real_dataset else []
        imaginary_tasks = self.imaginary_dataset.tasks if self.imaginary_dataset else []
        self.tasks = list(dict.fromkeys(self.real_tasks + imaginary_tasks))
        self._rank = self.trainer.global_rank if self.trainer is not None else 0
        self.sampler = MixedSampler(
            self._transitions(self.real_dataset),
            self._transitions(self.imaginary_dataset),
            self.mix_mode,
            self.mix_ratio_real,
            device=self._storage_device(),
        )

    def _storage_device(self) -> torch.device:
        """``data.storage_device``, with ``auto`` the trainer's device (the CPU without a trainer)."""
        if self._fixed_storage_device is not None:
            return self._fixed_storage_device
        return self.trainer.strategy.root_device if self.trainer is not None else torch.device("cpu")

    def state_statistics(self, min_std: float = 1e-3) -> tuple[torch.Tensor, torch.Tensor]:
        """Mean and standard deviation (at least ``min_std``) of the real data's states, for the
        algorithms' observation normalisation: imagined states may be implausible, real ones are not."""
        if self.real_dataset is None:
            raise RuntimeError("OfflineDataModule.state_statistics: needs real data (data.real) loaded by setup()")
        return mean_and_std(self.real_dataset.steps["state"], min_std)

    def _default_imaginary(self) -> list[str]:
        """The datasets ``imaginary_levels`` stands for, logged so a run says which data it used."""
        paths = [str(imaginary_dataset_dir(self.env_id, level)) for level in self.imaginary_levels]
        for level, path in zip(self.imaginary_levels, paths):
            rank_zero_info(f"data.imaginary_levels: {level} → {path}")
        return paths

    def _load(self, source: str, paths: list[str]) -> EpisodeDataset | None:
        """Load and check every dataset of one source; ``None`` when there are none."""
        if not paths:
            return None
        expected = get_domain(self.env_id).expected_metadata(source, self.instruction_encoder.encoder_id)
        datasets = [open_dataset(path) for path in paths]
        for dataset in datasets:
            check_metadata(dataset, expected, f"loaded as {source} data of this run")
        if source == "imaginary" and self.hparams.imaginary_filter:
            datasets = [self._filtered(dataset) for dataset in datasets]
        return concat_datasets(datasets)

    def _filtered(self, dataset: EpisodeDataset) -> EpisodeDataset:
        """``dataset`` without the rollouts that fail a check of ``imaginary_filter``."""
        from imaginebench.rollout_quality import check_rollouts, failed_checks

        kept = [
            c.episode_id for c in check_rollouts(dataset) if not failed_checks(c) & set(self.hparams.imaginary_filter)
        ]
        if not kept:
            raise DatasetError(
                f"{dataset.path}: data.imaginary_filter {self.hparams.imaginary_filter} drops every rollout"
            )
        return dataset.with_episodes(kept)

    def _transitions(self, dataset: EpisodeDataset | None) -> Transitions | None:
        """Transitions with ``task_id`` re-indexed into :attr:`tasks`."""
        if dataset is None:
            return None
        transitions = to_transitions(dataset)
        task_index = torch.tensor([self.tasks.index(task) for task in dataset.tasks], dtype=torch.int64)
        transitions.rows["task_id"] = task_index[transitions.rows["task_id"]]
        return transitions

    def _epoch(self) -> Iterator[TensorDict]:
        self.sampler.reseed((self.seed, self._rank, TRAIN_STREAM, self._epochs_started))
        self._epochs_started += 1
        for _ in range(self.batches_per_epoch):
            yield self.sampler.sample(self.batch_size)

    def train_dataloader(self) -> DataLoader:
        if self.sampler is None:
            raise RuntimeError("OfflineDataModule: call setup() before train_dataloader()")
        return DataLoader(
            EpochBatches(self._epoch, self.batches_per_epoch), batch_size=None, collate_fn=as_is, num_workers=0
        )

    def val_dataloader(self) -> DataLoader:
        return self._evaluation_loader(VALIDATION_STREAM)

    def test_dataloader(self) -> DataLoader:
        return self._evaluation_loader(TEST_STREAM)

    def _evaluation_loader(self, stream: int) -> DataLoader:
        """``evaluation_batches`` batches from a stream of their own, the same at every call, for loss diagnostics."""
        if self.sampler is None:
            raise RuntimeError("OfflineDataModule: call setup() before requesting a dataloader")

        def batches() -> Iterator[TensorDict]:
            self.sampler.reseed((self.seed, self._rank, stream))
            for _ in range(self.evaluation_batches):
                yield self.sampler.sample(self.batch_size)

        return DataLoader(
            EpochBatches(batches, self.evaluation_batches), batch_size=None, collate_fn=as_is, num_workers=0
        )

    def state_dict(self) -> dict[str, Any]:
        """Epochs drawn so far; every rank re-derives its own stream from it on resume."""
        return {"epochs_started": self._epochs_started}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self._epochs_started = int(state_dict["epochs_started"])

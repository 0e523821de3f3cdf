from types import SimpleNamespace

import pytest
import torch
from lightning.pytorch import LightningModule, Trainer
from lightning.pytorch.callbacks import ModelCheckpoint
from tensordict import TensorDict

from datamodules.mixing import SOURCE_IMAGINARY, SOURCE_REAL
from datamodules.offline_data import OfflineDataModule
from imaginebench.commands.imagine import find_or_imagine
from imaginebench.datasets import DatasetError, load_episodes
from imaginebench.errors import UserInputError
from tests.data_roots import first_use_collection_options
from tests.shipped_fixtures import TINY_SETTINGS
from tests.synthetic_episodes import EMBEDDING_DIM, ENV_ID, NUM_ACTIONS, STATE_DIM, TASKS, write_synthetic


@pytest.fixture
def paths(tmp_path):
    return {
        "real": [
            write_synthetic(tmp_path / "real-a", "real"),
            write_synthetic(tmp_path / "real-b", "real", num_episodes=4),
        ],
        "imaginary": [write_synthetic(tmp_path / "imaginary", "imaginary")],
    }


def make_data(paths, rank: int | None = None, **kwargs) -> OfflineDataModule:
    data = OfflineDataModule(
        ENV_ID, paths["real"], paths["imaginary"], **{"batch_size": 32, "batches_per_epoch": 4, **kwargs}
    )
    if rank is not None:
        data.trainer = SimpleNamespace(global_rank=rank)
    data.setup("fit")
    return data


def epoch_states(data: OfflineDataModule) -> torch.Tensor:
    return torch.stack([batch["state"] for batch in data.train_dataloader()])


def test_env_spec_is_known_before_any_data_exists(tmp_path):
    data = OfflineDataModule(ENV_ID, real=[str(tmp_path / "not-collected-yet")], mix_ratio_real=1.0)
    assert data.env_spec == {
        "state_dim": STATE_DIM,
        "embedding_dim": EMBEDDING_DIM,
        "action_kind": "discrete",
        "num_actions": NUM_ACTIONS,
        "action_dim": 0,
        "action_bound": 1.0,
    }
    assert data.real_dataset is None


def test_yields_batches_per_epoch_ready_batches(paths):
    data = make_data(paths, batch_size=50, batches_per_epoch=7, mix_ratio_real=0.3)
    loader = data.train_dataloader()
    batches = list(loader)
    assert len(loader) == len(batches) == 7
    for batch in batches:
        assert isinstance(batch, TensorDict) and batch.batch_size == torch.Size([50])
        assert batch["state"].shape == batch["next", "state"].shape == (50, STATE_DIM)
        assert batch["instruction_embedding"].shape == (50, EMBEDDING_DIM)
        assert batch["action"].dtype == batch["task_id"].dtype == batch["source"].dtype == torch.int64
        assert batch["next", "reward"].shape == (50, 1)
        for flag in ("terminated", "truncated", "done"):
            assert batch["next", flag].shape == (50, 1) and batch["next", flag].dtype == torch.bool
        assert int((batch["source"] == SOURCE_REAL).sum()) == 15
        assert torch.equal(batch["state"][:, 0].long(), batch["source"])


def test_datasets_and_task_tables_are_exposed(paths):
    data = make_data(paths)
    assert data.real_dataset.num_steps == 24 * 5 and data.imaginary_dataset.num_steps == 20 * 5
    assert data.real_tasks == TASKS["real"]
    assert data.tasks == ["goto", "pickup", "open_door"]
    # task ids index the joint table: imaginary "open_door" rows (local id 1) become 2
    batch = next(iter(data.train_dataloader()))
    imaginary_tasks = batch["task_id"][batch["source"] == SOURCE_IMAGINARY]
    assert set(imaginary_tasks.tolist()) <= {1, 2} and 2 in imaginary_tasks.tolist()


def test_real_only_run_needs_no_imaginary_paths(paths):
    data = make_data({**paths, "imaginary": []}, mix_ratio_real=1.0)
    assert data.imaginary_dataset is None
    assert all((batch["source"] == SOURCE_REAL).all() for batch in data.train_dataloader())


def test_imaginary_levels_load_the_data_roots_rollouts_else_the_shipped_ones(paths, tmp_path, monkeypatch):
    root, assets = tmp_path / "root", tmp_path / "assets"
    monkeypatch.setenv("IMAGINEBENCH_DATA", str(root))
    monkeypatch.setattr("imaginebench.assets.ASSETS_DIR", assets)
    own_easy = load_episodes(write_synthetic(root / ENV_ID / "imaginary-easy", "imaginary", num_episodes=3))
    shipped_hard = load_episodes(
        write_synthetic(
            assets / ENV_ID / "imaginary-hard", "imaginary", num_episodes=5, tasks=["open_door", "put_line"]
        )
    )
    write_synthetic(
        assets / ENV_ID / "imaginary-easy", "imaginary", num_episodes=7
    )  # the data root's own easy data win
    data = make_data({**paths, "imaginary": []}, imaginary_levels=["easy", "hard"])
    assert data.imaginary_dataset.num_steps == own_easy.num_steps + shipped_hard.num_steps
    assert data.tasks == TASKS["real"] + ["open_door", "put_line"]
    with pytest.raises(UserInputError, match="no imaginary data of BabyAI-v0 level 'train'"):
        make_data({**paths, "imaginary": []}, imaginary_levels=["train"])


def test_a_missing_shipped_level_is_imagined_by_the_command_never_by_the_datamodule(
    paths, tmp_path, monkeypatch, shipped_tiny_model
):
    monkeypatch.setenv("IMAGINEBENCH_DATA", str(tmp_path / "root"))
    data = OfflineDataModule(ENV_ID, paths["real"], imaginary_levels=["easy"], batch_size=8, batches_per_epoch=1)
    with monkeypatch.context() as patched:
        patched.setattr("imaginebench.commands.imagine.imagine", lambda *a, **k: pytest.fail("the DataModule imagined"))
        data.prepare_data()
        with pytest.raises(UserInputError, match="`imaginebench fit` imagines it from the shipped model"):
            data.setup("fit")
    imagined = find_or_imagine(ENV_ID, "easy")  # what `imaginebench fit` runs before the trainer starts
    assert imagined == tmp_path / "root" / ENV_ID / "imaginary-easy"
    monkeypatch.setattr("imaginebench.commands.imagine.imagine", lambda *a, **k: pytest.fail("imagined again"))
    assert find_or_imagine(ENV_ID, "easy") == imagined
    data.setup("fit")
    assert (
        data.imaginary_dataset.num_episodes == TINY_SETTINGS["rollouts"]
        and data.imaginary_dataset.metadata["level"] == "easy"
    )


def test_missing_imaginary_data_names_mix_ratio_real(paths):
    with pytest.raises(ValueError, match="mix_ratio_real=0.5 draws imaginary transitions"):
        make_data({**paths, "imaginary": []})


def test_seeded_streams_are_reproducible_and_differ_across_ranks_and_epochs(paths):
    rank0 = make_data(paths, rank=0, seed=5)
    first_epoch = epoch_states(rank0)
    assert torch.equal(epoch_states(make_data(paths, rank=0, seed=5)), first_epoch)
    assert not torch.equal(epoch_states(make_data(paths, rank=1, seed=5)), first_epoch)
    assert not torch.equal(epoch_states(make_data(paths, rank=0, seed=6)), first_epoch)
    assert not torch.equal(epoch_states(rank0), first_epoch)  # the next epoch draws new batches


@pytest.mark.parametrize(
    "listed_as, written_as, metadata, field",
    [
        ("real", "real", {"env_id": "Other-v0"}, "env_id"),
        ("imaginary", "imaginary", {"encoder_id": "bert-base-uncased:pooler"}, "encoder_id"),
        ("imaginary", "real", {}, "source"),
    ],
)
def test_mismatched_dataset_is_rejected_naming_file_and_field(paths, tmp_path, listed_as, written_as, metadata, field):
    bad = write_synthetic(tmp_path / "bad", written_as, **metadata)
    with pytest.raises(DatasetError, match=rf"{tmp_path / 'bad' / 'metadata.json'}: field '{field}'"):
        make_data({**paths, listed_as: paths[listed_as] + [bad]})


def test_a_real_path_that_does_not_exist_is_an_error_and_nothing_is_collected(
    paths, tmp_path, monkeypatch, shipped_tiny_model
):
    monkeypatch.setenv("IMAGINEBENCH_DATA", str(tmp_path / "root"))
    monkeypatch.setattr("imaginebench.collect.collect", lambda *args, **kwargs: pytest.fail("collected"))
    misspelled = str(tmp_path / "real-trian")
    data = OfflineDataModule(
        ENV_ID, paths["real"] + [misspelled], imaginary_levels=["easy"], real_levels=["train"], collect_if_missing=30
    )
    with pytest.raises(
        DatasetError, match=rf"data.real: {misspelled} is neither a dataset directory nor a local Minari dataset id"
    ):
        data.prepare_data()
    assert not (tmp_path / "real-trian").exists() and not (tmp_path / "root").exists()  # checked before imagining too


def test_real_levels_are_collected_on_first_use_into_the_default_location(paths, tmp_path, monkeypatch):
    monkeypatch.setenv("IMAGINEBENCH_DATA", str(tmp_path / "root"))
    default = tmp_path / "root" / ENV_ID / "real-hard"
    with pytest.raises(DatasetError, match=rf"data.real_levels: {default} does not exist; set data.collect_if_missing"):
        OfflineDataModule(ENV_ID, real_levels=["hard"], mix_ratio_real=1.0).prepare_data()
    calls = []
    monkeypatch.setattr(
        "imaginebench.collect.collect",
        lambda *args, **kwargs: calls.append((args, kwargs)) or write_synthetic(args[3], "real"),
    )
    data = OfflineDataModule(
        ENV_ID, paths["real"], real_levels=["hard"], collect_if_missing=30, mix_ratio_real=1.0, batch_size=8
    )
    data.prepare_data()
    data.prepare_data()  # there now: not collected again
    assert calls == [
        (
            (ENV_ID, "hard", 30, default),
            first_use_collection_options(),
        )
    ]
    data.setup("fit")
    assert data.real_dataset.num_steps == (20 + 4 + 20) * 5  # the listed datasets, then the level's default one
    with pytest.raises(
        UserInputError, match=rf"data.real lists {default}, which data.real_levels \['hard'\] loads already"
    ):
        make_data({"real": [str(default)], "imaginary": []}, real_levels=["hard"], mix_ratio_real=1.0)


def test_lightning_moves_the_batch_with_tensordict_to():
    batch = TensorDict({"state": torch.zeros(4, 3), "next": {"reward": torch.zeros(4, 1)}}, batch_size=[4])
    moved = LightningModule().transfer_batch_to_device(batch, torch.device("meta"), 0)
    assert moved.device == torch.device("meta") and moved["next", "reward"].device == torch.device("meta")


class BatchRecorder(LightningModule):
    """Remembers the rows of every batch it trains on."""

    def __init__(self) -> None:
        super().__init__()
        self.layer = torch.nn.Linear(STATE_DIM, 1)
        self.seen: dict[int, list[torch.Tensor]] = {}

    def training_step(self, batch: TensorDict, batch_idx: int) -> torch.Tensor:
        assert isinstance(batch, TensorDict) and batch.device == self.device
        self.seen.setdefault(self.current_epoch, []).append(batch["state"][:, :2].clone())
        return self.layer(batch["state"]).square().mean()

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.01)


def fit(paths, tmp_path, max_epochs: int, ckpt_path: str | None = None, storage_device: str = "cpu") -> BatchRecorder:
    module = BatchRecorder()
    trainer = Trainer(
        max_epochs=max_epochs,
        accelerator="cpu",
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        callbacks=[ModelCheckpoint(dirpath=tmp_path / "checkpoints", save_last=True)],
        default_root_dir=tmp_path,
    )
    data = OfflineDataModule(
        ENV_ID,
        paths["real"],
        paths["imaginary"],
        batch_size=16,
        batches_per_epoch=3,
        seed=1,
        storage_device=storage_device,
    )
    trainer.fit(module, datamodule=data, ckpt_path=ckpt_path)
    return module


def test_resumed_fit_continues_the_same_stream(paths, tmp_path):
    uninterrupted = fit(paths, tmp_path / "a", max_epochs=2)
    assert len(uninterrupted.seen[1]) == 3
    assert not torch.equal(torch.stack(uninterrupted.seen[0]), torch.stack(uninterrupted.seen[1]))
    fit(paths, tmp_path / "b", max_epochs=1)
    resumed = fit(paths, tmp_path / "b", max_epochs=2, ckpt_path=str(tmp_path / "b" / "checkpoints" / "last.ckpt"))
    assert list(resumed.seen) == [1]
    assert torch.equal(torch.stack(resumed.seen[1]), torch.stack(uninterrupted.seen[1]))


def test_auto_storage_trains_on_the_trainers_device_with_the_same_batches(paths, tmp_path):
    on_cpu = fit(paths, tmp_path / "cpu", max_epochs=1)
    auto = fit(paths, tmp_path / "auto", max_epochs=1, storage_device="auto")
    assert torch.equal(torch.stack(auto.seen[0]), torch.stack(on_cpu.seen[0]))


def test_the_record_of_loaded_datasets_names_the_grounded_model_each_imaginary_one_came_from(paths, tmp_path):
    grounded = write_synthetic(
        tmp_path / "grounded",
        "imaginary",
        generator={"kind": "grounded-lm", "checkpoint_sha256": "ab12", "next_states": "dynamics", "temperature": 1.0},
    )
    data = make_data({**paths, "imaginary": [*paths["imaginary"], grounded]})
    assert data.dataset_paths["imaginary"] == [*paths["imaginary"], grounded]
    assert data.dataset_paths["imaginary_checkpoints"] == [None, "ab12"]
    assert data.dataset_paths["imaginary_next_states"] == [None, "dynamics"]
    assert data.dataset_paths["imaginary_temperatures"] == [None, 1.0]
    assert data.dataset_paths["imaginary_episodes"] == [
        load_episodes(path).num_episodes for path in data.dataset_paths["imaginary"]
    ]


@pytest.mark.parametrize("storage_device", ["meta", "auto"])
def test_storage_device_keeps_the_transitions_where_it_says(paths, storage_device):
    """``auto`` is the trainer's device (``meta`` stands for a GPU here); the batches keep their layout."""
    data = OfflineDataModule(ENV_ID, paths["real"], paths["imaginary"], batch_size=32, storage_device=storage_device)
    data.trainer = SimpleNamespace(global_rank=0, strategy=SimpleNamespace(root_device=torch.device("meta")))
    data.setup("fit")
    batch = next(iter(data.train_dataloader()))
    reference = make_data(paths)
    expected = next(iter(reference.train_dataloader()))
    assert {key: value.device.type for key, value in batch.items(include_nested=True, leaves_only=True)} == {
        key: "meta" for key in expected.keys(include_nested=True, leaves_only=True)
    }
    assert batch["state"].shape == expected["state"].shape


@pytest.mark.parametrize("storage_device, message", [("gpu", "is not 'auto' or a torch device"), ("cuda:x", "")])
def test_a_storage_device_torch_does_not_know_is_named_in_one_line(paths, storage_device, message):
    with pytest.raises(UserInputError, match=rf"^data\.storage_device: '{storage_device}'.*{message}"):
        OfflineDataModule(ENV_ID, paths["real"], paths["imaginary"], storage_device=storage_device)


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a CUDA device")
def test_a_cuda_storage_device_without_cuda_is_named(paths):
    with pytest.raises(UserInputError, match=r"^data\.storage_device: 'cuda', but torch sees no CUDA device"):
        OfflineDataModule(ENV_ID, paths["real"], paths["imaginary"], storage_device="cuda")

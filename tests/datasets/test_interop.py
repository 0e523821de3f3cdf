"""Exports to Minari, Hugging Face parquet and d3rlpy arrays: export → load → identical transitions."""

import json
import re

import numpy as np
import pytest
import torch

from datamodules.offline_data import OfflineDataModule
from imaginebench.commands.main import main
from imaginebench.datasets import DatasetError, export_dataset, load_episodes, open_dataset, write_episodes
from imaginebench.datasets.interop.d3rlpy_format import ARRAYS_FILE
from imaginebench.datasets.interop.parquet_format import INSTRUCTIONS_FILE, STEPS_FILE, load_parquet
from imaginebench.errors import UserInputError
from tests.synthetic_episodes import ENV_ID, synthetic_dataset

MINARI_ID = f"imaginebench/{ENV_ID}/real-train-v0"
PROVENANCE = ("env_id", "level", "source", "encoder_id", "tasks", "generator", "produced_by", "action_kind")


def chained(action_kind: str = "discrete", lengths=(1, 4, 3, 2), source: str = "real"):
    """A synthetic dataset whose ``next_state`` is the next row's state inside an episode (as collected
    data is), with a truncated episode, and continuous actions if asked."""
    dataset = synthetic_dataset(
        source, lengths, generator={"kind": "expert", "seed": 3}, produced_by={"command": "test"}
    )
    steps = dataset.steps
    same = steps["episode_id"][1:] == steps["episode_id"][:-1]
    steps["next_state"][:-1][same] = steps["state"][1:][same]
    ends = torch.tensor(lengths).cumsum(0) - 1
    steps["terminated"][ends[1]], steps["truncated"][ends[1]] = False, True
    if action_kind == "continuous":
        steps["action"] = torch.randn(dataset.num_steps, 3)
        dataset.metadata.update(action_kind="continuous", action_dim=3, num_actions=0)
    return dataset


def assert_same_transitions(loaded, original, exact_ids: bool = True):
    fields = [name for name in original.steps.keys() if exact_ids or name != "instruction_id"]
    for name in fields:
        assert torch.equal(loaded.steps[name], original.steps[name]), name
    assert [loaded.instruction_texts[i] for i in loaded.steps["instruction_id"]] == [
        original.instruction_texts[i] for i in original.steps["instruction_id"]
    ]
    assert torch.equal(
        loaded.instruction_embeddings[loaded.steps["instruction_id"]],
        original.instruction_embeddings[original.steps["instruction_id"]],
    )
    for name in PROVENANCE:
        assert loaded.metadata[name] == original.metadata[name], name


@pytest.fixture
def minari_root(tmp_path, monkeypatch):
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "minari"))
    return tmp_path / "minari"


@pytest.mark.parametrize("action_kind", ["discrete", "continuous"])
def test_minari_round_trip_and_what_minari_sees(minari_root, tmp_path, action_kind):
    import minari

    original = chained(action_kind)
    assert export_dataset(original, "minari") == MINARI_ID
    loaded = open_dataset(MINARI_ID)
    assert_same_transitions(loaded, original, exact_ids=False)
    assert (
        load_episodes(write_episodes(loaded, tmp_path / "back")).num_steps == original.num_steps
    )  # passes the validator

    seen = minari.load_dataset(MINARI_ID)
    assert seen.total_episodes == 4 and seen.total_steps == original.num_steps
    episode = seen[1]
    assert set(episode.observations) == {"state", "instruction_embedding"}
    assert np.array_equal(
        episode.observations["state"], np.concatenate([original.steps["state"][1:5], original.steps["next_state"][4:5]])
    )
    assert list(episode.infos["is_success"]) == [False, *original.steps["success"][1:5].tolist()]
    assert [m["instruction"] for m in seen.storage.get_episode_metadata(range(4))] == [
        original.instruction_texts[i] for i in (0, 1, 2, 0)
    ]
    assert seen.storage.metadata["imaginebench"]["source"] == "real"


def test_minari_needs_next_state_to_be_the_next_state(minari_root):
    dataset = chained()
    dataset.steps["next_state"][2] += 1
    with pytest.raises(DatasetError, match="field 'next_state' differs"):
        export_dataset(dataset, "minari")
    assert not (minari_root / MINARI_ID).exists()


@pytest.mark.parametrize("action_kind", ["discrete", "continuous"])
def test_parquet_round_trip_and_hugging_face_reads_it(tmp_path, monkeypatch, action_kind):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    import datasets

    original = chained(action_kind)
    out = export_dataset(original, "parquet", str(tmp_path / "pq"))
    assert_same_transitions(load_parquet(out), original)
    assert torch.equal(load_parquet(out).instruction_embeddings, original.instruction_embeddings)

    steps = datasets.load_dataset(
        "parquet", data_files=f"{out}/{STEPS_FILE}", split="train", cache_dir=str(tmp_path / "hf")
    )
    steps.set_format("numpy")
    assert steps.features["state"].feature.dtype == "float32"
    for name in original.steps.keys():
        assert np.array_equal(steps[name], original.steps[name].numpy()), name
    assert list(steps["instruction"]) == [original.instruction_texts[i] for i in original.steps["instruction_id"]]
    table = datasets.load_dataset(
        "parquet", data_files=f"{out}/{INSTRUCTIONS_FILE}", split="train", cache_dir=str(tmp_path / "hf")
    )
    assert np.array_equal(np.asarray(table["embedding"], dtype=np.float32), original.instruction_embeddings.numpy())


def d3rlpy_episodes(arrays) -> list[dict[str, np.ndarray]]:
    """Episodes as d3rlpy cuts them: after every row with ``terminals`` or ``timeouts`` set."""
    ends = np.flatnonzero(np.logical_or(arrays["terminals"], arrays["timeouts"])) + 1
    return [
        {key: arrays[key][start:end] for key in ("observations", "actions", "rewards")}
        for start, end in zip([0, *ends[:-1]], ends)
    ]


@pytest.mark.parametrize("action_kind", ["discrete", "continuous"])
def test_d3rlpy_arrays_are_the_episodes(tmp_path, action_kind):
    original = chained(action_kind)
    out = export_dataset(original, "d3rlpy", str(tmp_path / "d3"))
    with np.load(f"{out}/{ARRAYS_FILE}") as arrays:
        assert sorted(arrays.keys()) == ["actions", "observations", "rewards", "terminals", "timeouts"]
        episodes = d3rlpy_episodes(arrays)
    steps = original.steps
    observations = torch.cat([steps["state"], original.instruction_embeddings[steps["instruction_id"]]], dim=1).numpy()
    bounds = [(0, 1), (1, 5), (5, 8), (8, 10)]
    assert len(episodes) == len(bounds)
    for episode, (start, end) in zip(episodes, bounds):
        assert np.array_equal(episode["observations"], observations[start:end])
        assert np.array_equal(episode["actions"], steps["action"][start:end].numpy())
        assert np.array_equal(episode["rewards"], steps["reward"][start:end].numpy())
    layout = json.loads((tmp_path / "d3" / "metadata.json").read_text())["export"]["observation_columns"]
    assert layout == {"state": [0, 17], "instruction_embedding": [17, 17 + 384]}


def test_d3rlpy_builds_an_mdp_dataset(tmp_path):
    pytest.importorskip("d3rlpy")  # d3rlpy pins gymnasium 1.0: it runs only in an environment of its own
    from imaginebench.datasets.interop.d3rlpy_format import load_mdp_dataset

    original = chained()
    mdp = load_mdp_dataset(export_dataset(original, "d3rlpy", str(tmp_path / "d3")))
    assert len(mdp.episodes) == 4 and sum(len(e.rewards) for e in mdp.episodes) == original.num_steps


def test_offline_data_module_takes_a_minari_id(minari_root, tmp_path):
    real = chained(lengths=(3,) * 8)
    export_dataset(real, "minari")
    imaginary = write_episodes(synthetic_dataset("imaginary", (4,) * 8), tmp_path / "imaginary")
    data = OfflineDataModule(ENV_ID, [MINARI_ID], [str(imaginary)], batch_size=8, batches_per_epoch=2)
    data.setup("fit")
    assert torch.equal(data.real_dataset.steps["state"], real.steps["state"])
    assert data.tasks == ["goto", "pickup", "open_door"]


def test_an_unknown_dataset_names_both_places_looked(minari_root, tmp_path):
    with pytest.raises(DatasetError, match="neither a dataset directory nor a local Minari dataset id"):
        open_dataset(str(tmp_path / "nowhere"))
    with pytest.raises(DatasetError, match="not-there-v0"):
        OfflineDataModule(ENV_ID, ["imaginebench/not-there-v0"], mix_ratio_real=1.0).prepare_data()
    for path in ("data/BabyAI-v0/not-there", "not-there"):  # minari's id parser raised TypeError on these
        with pytest.raises(DatasetError, match=f"{path}: neither a dataset directory nor a local Minari dataset id"):
            open_dataset(path)


def export_error(capsys, arguments: list[str]) -> str:
    """The one line ``imaginebench export`` stops with."""
    with pytest.raises(SystemExit) as stopped:
        main(["export", *arguments])
    assert stopped.value.code == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    return line


def test_export_refuses_to_overwrite_unless_asked(minari_root, tmp_path, capsys):
    source = str(write_episodes(chained(), tmp_path / "ds"))
    out = tmp_path / "pq"
    main(["export", "--format", "parquet", source, "--out", str(out)])
    (out / "marker").touch()
    assert re.match(
        r"imaginebench export: .*pq already exists \(pass --overwrite",
        export_error(capsys, ["--format", "parquet", source, "--out", str(out)]),
    )
    assert (out / "marker").exists()
    main(["export", "--format", "parquet", source, "--out", str(out), "--overwrite"])
    assert not (out / "marker").exists()
    project = tmp_path / "myproject"
    project.mkdir()
    (project / "notes.txt").write_text("precious")
    for format_name in ("parquet", "d3rlpy"):
        with pytest.raises(
            UserInputError, match="myproject is not a .* export of imaginebench.*refusing to replace it"
        ):
            export_dataset(load_episodes(source), format_name, str(project), overwrite=True)
    assert (project / "notes.txt").read_text() == "precious"

    main(["export", "--format", "minari", source])
    assert "already exists" in export_error(capsys, ["--format", "minari", source])
    main(["export", "--format", "minari", source, "--overwrite"])
    assert open_dataset(MINARI_ID).num_steps == 10


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--format", "csv", "--out", "x"], r"--format 'csv': unknown; choose one of minari, parquet, d3rlpy"),
        (["--format", "parquet"], r"--format parquet writes the directory --out"),
        (["--format", "minari", "--out", "x"], r"--out: --format minari writes under \$MINARI_DATASETS_PATH"),
        (["--format", "minari", "--dataset-id", "no spaces allowed"], r"'no spaces allowed': not a Minari dataset id"),
    ],
)
def test_export_rejects_bad_options_in_one_line(minari_root, tmp_path, capsys, arguments, message):
    source = str(write_episodes(chained(), tmp_path / "ds"))
    assert re.match(f"imaginebench export: {message}", export_error(capsys, [source, *arguments]))


def test_export_of_a_missing_dataset_names_it(minari_root, tmp_path, capsys):
    line = export_error(capsys, ["--format", "parquet", str(tmp_path / "missing-dir"), "--out", str(tmp_path / "out")])
    assert re.match(r"imaginebench export: .*missing-dir: neither a dataset directory", line)
    with pytest.raises(UserInputError):
        export_dataset(chained(), "minari", dataset_id="bad id")

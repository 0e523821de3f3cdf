"""Every algorithm config of the continuous domains parses and trains a few updates on real + imaginary data.

The imaginary part is expert data of the easy level relabelled as imaginary: what the DataModule sees of a rollout
is its fields and metadata, and a grounded model would cost minutes per domain here. LIBERO's two configs (BC and
TD3+BC, the same modules) are left out: they need the extra, and its expert episodes take minutes to collect.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from imaginebench.collect import collect
from imaginebench.commands.lightning_cli import run_lightning_cli
from imaginebench.datasets import load_episodes, write_episodes
from imaginebench.datasets.locations import default_dataset_dir
from imaginebench.registry import get_domain
from tests.envs.test_domain_contract import algorithm_configs
from tests.test_lightning_cli import tiny_config

ENVS = ("MetaWorld-v0", "Mujoco-v0")


@pytest.fixture(scope="module")
def data_root(tmp_path_factory) -> Path:
    """One expert episode per train task as the real data, and per easy task as the 'imaginary' data."""
    root = tmp_path_factory.mktemp("data")
    for env_id in ENVS:
        domain = get_domain(env_id)
        collect(env_id, "train", len(domain.tasks["train"]), default_dataset_dir(env_id, "real", "train", root))
        easy = collect(env_id, "easy", len(domain.tasks["easy"]), root / env_id / "expert-easy", seed=1)
        expert = load_episodes(easy)
        relabelled = dataclasses.replace(expert, metadata={**expert.metadata, "source": "imaginary"})
        write_episodes(relabelled, default_dataset_dir(env_id, "imaginary", "easy", root))
    return root


def tiny_run_config(tmp_path: Path) -> Path:
    """Four updates of 16 rows, half of them imaginary; no evaluation (the simulators are the cost)."""
    config = yaml.safe_load(tiny_config(tmp_path).read_text())
    config["trainer"].update({"max_epochs": 1, "log_every_n_steps": 2, "callbacks": []})
    config["data"] = {
        "batch_size": 16,
        "batches_per_epoch": 4,
        "imaginary_levels": ["easy"],
        "imaginary_filter": [],
        "mix_ratio_real": 0.5,
    }
    path = tmp_path / "tiny-run.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.mark.parametrize(
    "config",
    [path for env_id in ENVS for path in algorithm_configs(env_id).values()],
    ids=lambda p: f"{p.parent.name}/{p.stem}",
)
def test_every_continuous_algorithm_config_trains_on_real_and_imaginary_data(config, data_root, tmp_path, monkeypatch):
    monkeypatch.setenv("IMAGINEBENCH_DATA", str(data_root))
    run_lightning_cli(["fit", "--config", str(config), "--config", str(tiny_run_config(tmp_path))])
    (run_dir,) = (tmp_path / "runs" / "tiny").iterdir()
    saved = yaml.safe_load((run_dir / "config.yaml").read_text())
    assert saved["data"]["imaginary_levels"] == ["easy"] and saved["data"]["mix_ratio_real"] == 0.5
    (checkpoint,) = (run_dir / "checkpoints").glob("*.ckpt")
    assert "step=4" in checkpoint.name
    events = EventAccumulator(str(run_dir))
    events.Reload()
    per_source = {tag.rsplit("/", 1)[1] for tag in events.Tags()["scalars"] if tag.endswith(("/real", "/imaginary"))}
    assert per_source == {"real", "imaginary"}, events.Tags()["scalars"]  # both sources reached the losses

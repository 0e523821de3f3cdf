"""Bad input to every command: one line naming the option, file or field, a non-zero exit, no traceback."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml

from imaginebench.collect import collect
from imaginebench.commands.main import main
from imaginebench.datasets import EpisodeDataset, load_episodes, write_episodes
from imaginebench.errors import UserInputError

REPO = Path(__file__).resolve().parents[1]
BC = str(REPO / "lightning_config" / "babyai" / "bc.yaml")
GROUNDING = str(REPO / "lightning_config" / "grounding" / "babyai.yaml")
METAWORLD_BC = str(REPO / "lightning_config" / "metaworld" / "bc.yaml")
SHIPPED_CKPT = str(REPO / "assets" / "BabyAI-v0" / "grounding.ckpt")
METADATA_CHANGES = {
    "state-dim-text": {"state_dim": "seventeen"},
    "embedding-dim-text": {"embedding_dim": "384x"},
    "no-num-actions": {"num_actions": None},
    "tasks-text": {"tasks": "GoTo"},
    "tasks-numbers": {"tasks": [1, 2, 3, 4]},
    "other-env": {"env_id": "Ball-v0"},
}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    """A small real dataset, broken copies of it, broken checkpoints and a tiny fit config."""
    root = tmp_path_factory.mktemp("bad-inputs")
    real = collect("BabyAI-v0", "train", 4, root / "real", progress=False)
    for name, changes in METADATA_CHANGES.items():
        shutil.copytree(real, root / name)
        metadata = json.loads((root / name / "metadata.json").read_text())
        for field, value in changes.items():
            metadata.pop(field) if value is None else metadata.update({field: value})
        (root / name / "metadata.json").write_text(json.dumps(metadata))
    dataset = load_episodes(real)
    write_episodes(
        EpisodeDataset(
            dataset.steps[:0].clone(),
            dataset.instruction_texts,
            dataset.instruction_embeddings.clone(),
            dict(dataset.metadata),
        ),
        root / "empty",
    )
    (root / "random.ckpt").write_bytes(
        torch.randint(0, 256, (4096,), generator=torch.Generator().manual_seed(0), dtype=torch.uint8).numpy().tobytes()
    )
    (root / "text.ckpt").write_text("not a checkpoint\n")
    torch.save({"weights": torch.zeros(2)}, root / "plain-torch.ckpt")
    old_layout = {  # a BC checkpoint whose weights carry names this version does not build
        "state_dict": {"actor.module.0.weight": torch.zeros(2), "actor.module.0.bias": torch.zeros(2)},
        "pytorch-lightning_version": "2.6.0",
        "hyper_parameters": {"_class_path": "modules.bc.BC"},
    }
    torch.save(old_layout, root / "old-layout.ckpt")
    (root / "a-file").write_text("x")
    (root / "not-a-dataset").mkdir()
    config = {
        "trainer": {
            "max_epochs": 1,
            "enable_progress_bar": False,
            "callbacks": [],
            "logger": {
                "class_path": "lightning.pytorch.loggers.TensorBoardLogger",
                "init_args": {"save_dir": str(root / "runs")},
            },
        },
        "data": {
            "real": [str(real)],
            "real_levels": [],
            "imaginary_levels": [],
            "imaginary_filter": [],
            "collect_if_missing": 0,
            "mix_ratio_real": 1.0,
            "batch_size": 4,
            "batches_per_epoch": 1,
            "evaluation_batches": 1,
        },
    }
    (root / "tiny.yaml").write_text(yaml.safe_dump(config))
    return root


@pytest.fixture(autouse=True)
def own_data_root(tmp_path, monkeypatch):
    monkeypatch.setenv("IMAGINEBENCH_DATA", str(tmp_path / "data-root"))
    monkeypatch.delenv("IMAGINEBENCH_DEBUG", raising=False)


def fit(*options: str, subcommand: str = "fit") -> list[str]:
    return [subcommand, "--config", BC, "--config", "{in}/tiny.yaml", *options]


def imagine(*options: str, out: str = "{tmp}/imagined") -> list[str]:
    arguments = {
        "--checkpoint": SHIPPED_CKPT,
        "--env": "BabyAI-v0",
        "--level": "easy",
        "--rollouts": "2",
        "--out": out,
        "--device": "cpu",
    }
    arguments.update(zip(options[::2], options[1::2]))
    return ["imagine", *[part for pair in arguments.items() for part in pair]]


def collect_args(*options: str, out: str = "{tmp}/collected") -> list[str]:
    arguments = {"--env": "BabyAI-v0", "--episodes": "2", "--out": out}
    arguments.update(zip(options[::2], options[1::2]))
    return ["collect", *[part for pair in arguments.items() for part in pair]]


BAD_INPUTS = {
    # argv with {in} (the inputs fixture) and {tmp} (the test's tmp_path), the expected message after "imaginebench <command>: "
    "ckpt-random-bytes": (fit("--ckpt_path", "{in}/random.ckpt"), r"--ckpt_path \S+random.ckpt: not a checkpoint"),
    "ckpt-text": (
        fit("--ckpt_path", "{in}/text.ckpt", subcommand="validate"),
        r"--ckpt_path \S+text.ckpt: not a checkpoint",
    ),
    "ckpt-plain-torch": (
        fit("--ckpt_path", "{in}/plain-torch.ckpt", subcommand="test"),
        r"--ckpt_path \S+plain-torch.ckpt: a torch file but not a Lightning checkpoint",
    ),
    "ckpt-missing": (fit("--ckpt_path", "{in}/missing.ckpt"), r"--ckpt_path \S+missing.ckpt: no such file"),
    "ckpt-of-another-module": (
        fit("--ckpt_path", SHIPPED_CKPT),
        r"--ckpt_path \S+grounding.ckpt names no module class .*this config trains modules.bc.BC",
    ),
    "ckpt-old-layout": (
        fit("--ckpt_path", "{in}/old-layout.ckpt", subcommand="validate"),
        r"the checkpoint's weights do not fit BC as this version builds it: \d+ missing .* 2 unexpected "
        r"\(first \['actor.module.0.bias', 'actor.module.0.weight'\]\); was it written by an older imaginebench",
    ),
    "config-missing": (
        ["fit", "--config", "{in}/nope.yaml"],
        r'Parser key "config": File does not exist: \S+nope.yaml',
    ),
    "option-typo": (
        fit("--data.imaginary_filter", "[gaol]"),
        r'Parser key "data.imaginary_filter": Expected .*Got value: gaol',
    ),
    "env-id": (fit("--data.env_id", "Foo-v0"), r"data.env_id: unknown env id 'Foo-v0'"),
    "real-missing": (
        fit("--data.real", "[{in}/nope]"),
        r"data.real: \S+nope is neither a dataset directory nor a local Minari dataset id",
    ),
    "real-not-a-dataset": (fit("--data.real", "[{in}/not-a-dataset]"), r"\S+not-a-dataset/metadata.json: missing"),
    "real-other-env": (
        fit("--data.real", "[{in}/other-env]"),
        r"\S+other-env/metadata.json: field 'env_id' is 'Ball-v0', expected 'BabyAI-v0'",
    ),
    "mix-ratio-1.5": (fit("--data.mix_ratio_real", "1.5"), r"data.mix_ratio_real must lie in \[0, 1\], got 1.5"),
    "mix-ratio-0-no-imaginary": (
        fit("--data.mix_ratio_real", "0"),
        r"data.mix_mode='ratio' with data.mix_ratio_real=0.0 draws imaginary transitions",
    ),
    "batch-size-0": (fit("--data.batch_size", "0"), r"data.batch_size must be >= 1, got 0"),
    "batches-per-epoch-0": (fit("--data.batches_per_epoch", "0"), r"data.batches_per_epoch must be >= 1, got 0"),
    "imaginary-level": (fit("--data.imaginary_levels", "[extreme]"), r"data.imaginary_levels: unknown level 'extreme'"),
    "fit-encoder-missing": (
        fit("--data.encoder", "{in}/no-encoder"),
        r"data.encoder: instruction encoder '\S+no-encoder'",
    ),
    "state-dim-text": (
        fit("--data.real", "[{in}/state-dim-text]"),
        r"\S+metadata.json: field 'state_dim' must be a positive integer, got 'seventeen'",
    ),
    "embedding-dim-text": (
        fit("--data.real", "[{in}/embedding-dim-text]"),
        r"\S+metadata.json: field 'embedding_dim' must be a positive integer",
    ),
    "no-num-actions": (
        fit("--data.real", "[{in}/no-num-actions]"),
        r"\S+metadata.json: field 'num_actions' is missing",
    ),
    "tasks-text": (
        fit("--data.real", "[{in}/tasks-text]"),
        r"\S+metadata.json: field 'tasks' must be a list of task names, got 'GoTo'",
    ),
    "tasks-numbers": (
        fit("--data.real", "[{in}/tasks-numbers]"),
        r"\S+metadata.json: field 'tasks' must be a list of task names",
    ),
    "ground-val-fraction": (
        ["ground", "--config", GROUNDING, "--data.val_fraction", "2"],
        r"data.val_fraction must be in \(0, 1\), got 2",
    ),
    "ground-window-steps-0": (
        ["ground", "--config", GROUNDING, "--data.window_steps", "0"],
        r"data.window_steps must be >= 1, got 0",
    ),
    "ground-backbone-missing": (
        ["ground", "--config", GROUNDING, "--data.real", "[{in}/real]", "--model.backbone", "{in}/no-backbone"],
        r"model.tokenizer \(default: model.backbone\): directory '\S+no-backbone' does not exist",
    ),
    "quality-empty": (["rollout-quality", "{in}/empty"], r"\S+empty: has no episodes"),
    "quality-out-under-file": (
        ["rollout-quality", "{in}/real", "--out", "{in}/a-file/report.json"],
        r"--out \S+report.json: cannot be created",
    ),
    "collect-out-under-file": (
        collect_args(out="{in}/a-file/out"),
        r"--out \S+a-file/out: cannot be created in \S+a-file \(Not a directory\)",
    ),
    "collect-out-exists": (collect_args(out="{in}/real"), r"--out: \S+real already exists \(pass --overwrite"),
    "collect-encoder-missing": (
        collect_args("--encoder", "{in}/no-encoder"),
        r"--encoder: instruction encoder '\S+no-encoder'",
    ),
    "collect-env": (collect_args("--env", "Foo-v0"), r"--env: unknown env id 'Foo-v0'"),
    "collect-level": (collect_args("--level", "extreme"), r"--level: unknown level 'extreme'"),
    "collect-episodes-0": (collect_args("--episodes", "0"), r"--episodes must be >= 1, got 0"),
    "collect-workers-0": (collect_args("--workers", "0"), r"--workers must be >= 1, got 0"),
    "collect-workers-negative": (collect_args("--workers", "-2"), r"--workers must be >= 1, got -2"),
    "imagine-ckpt-random-bytes": (
        imagine("--checkpoint", "{in}/random.ckpt"),
        r"--checkpoint \S+random.ckpt: not a checkpoint",
    ),
    "imagine-ckpt-text": (imagine("--checkpoint", "{in}/text.ckpt"), r"--checkpoint \S+text.ckpt: not a checkpoint"),
    "imagine-ckpt-plain-torch": (
        imagine("--checkpoint", "{in}/plain-torch.ckpt"),
        r"--checkpoint \S+: a torch file but not a Lightning checkpoint",
    ),
    "imagine-ckpt-missing": (
        imagine("--checkpoint", "{in}/missing.ckpt"),
        r"--checkpoint \S+missing.ckpt: no such file",
    ),
    "imagine-level": (imagine("--level", "extreme"), r"--level: unknown level 'extreme'"),
    "imagine-rollouts-0": (imagine("--rollouts", "0"), r"--rollouts must be >= 1, got 0"),
    "imagine-out-under-file": (imagine(out="{in}/a-file/out"), r"--out \S+a-file/out: cannot be created"),
    "imagine-encoder-missing": (
        imagine("--encoder", "{in}/no-encoder"),
        r"--encoder: instruction encoder '\S+no-encoder'",
    ),
    "imagine-device": (imagine("--device", "gpu9"), r"--device 'gpu9'"),
    "pipeline-env": (["pipeline", "--env", "Foo-v0"], r"--env: unknown env id 'Foo-v0'"),
    "pipeline-rollouts-0": (
        ["pipeline", "--env", "BabyAI-v0", "--rollouts", "0", "--out", "{tmp}/pipeline"],
        r"--rollouts must be >= 1, got 0",
    ),
}


def error_line(argv: list[str], capsys) -> str:
    """Run the command in-process; return its one error line after checking the exit and the lack of a traceback."""
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code not in (0, None)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("imaginebench ")]
    assert len(lines) == 1 and err.rstrip().endswith(lines[0]), err
    return lines[0]


def test_an_imaginary_level_nothing_imagines_stops_before_real_data_are_collected(inputs, capsys, no_shipped_assets):
    argv = ["fit", "--config", METAWORLD_BC, "--config", f"{inputs}/tiny.yaml", "--data.imaginary_levels", "[easy]"]
    line = error_line(argv, capsys)
    assert re.match(
        r"imaginebench fit: data.imaginary_levels: no imaginary data of MetaWorld-v0 level 'easy' "
        r".*\(no shipped model at \S+\); `imaginebench pipeline --env MetaWorld-v0` grounds one",
        line,
    ), line


@pytest.mark.parametrize("case", BAD_INPUTS)
def test_bad_input_is_one_line_naming_it(case, inputs, tmp_path, capsys):
    argv, message = BAD_INPUTS[case]
    argv = [part.replace("{in}", str(inputs)).replace("{tmp}", str(tmp_path)) for part in argv]
    line = error_line(argv, capsys)
    assert re.match(rf"imaginebench {argv[0]}: {message}", line), line
    assert not list(inputs.glob(".*.partial")) and not list(tmp_path.glob(".*.partial"))  # nothing half-written


def test_an_error_raised_inside_trainer_fit_comes_out_as_one_line_in_a_real_process(inputs):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "imaginebench",
            "fit",
            "--config",
            BC,
            "--config",
            str(inputs / "tiny.yaml"),
            "--data.real",
            f"[{inputs}/state-dim-text]",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.rstrip().splitlines()[-1] == (
        f"imaginebench fit: {inputs}/state-dim-text/metadata.json: field 'state_dim' must be a positive integer, got 'seventeen'"
    )
    assert "LightningCLI's args parameter" not in result.stderr


def test_debug_switch_shows_the_traceback_of_a_user_error(tmp_path, monkeypatch):
    monkeypatch.setenv("IMAGINEBENCH_DEBUG", "1")
    with pytest.raises(UserInputError, match="--env: unknown env id"):
        main(["collect", "--env", "Foo-v0", "--episodes", "1", "--out", str(tmp_path / "out")])


def test_a_bug_keeps_its_traceback(tmp_path, monkeypatch):
    def broken(*args, **kwargs):
        raise ValueError("a bug, not the user's input")

    monkeypatch.setattr("imaginebench.commands.imagine.imagine", broken)
    with pytest.raises(ValueError, match="a bug"):
        main(imagine(out=str(tmp_path / "out")))

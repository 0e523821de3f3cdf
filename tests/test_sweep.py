"""``imaginebench sweep`` on a tiny grid: Ray Tune runs every cell, a finished cell is never rerun, an interrupted
one resumes from its checkpoint, and a failed one is reported while the others finish."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from imaginebench.commands.main import main
from imaginebench.commands.sweep import DONE_FILE, read_sweep
from imaginebench.errors import UserInputError
from tests.data_roots import babyai_data_root  # noqa: F401  (fixture)

REAL_ONLY = ["--data.imaginary_levels", "[]", "--data.mix_ratio_real", "1.0"]


def tiny_fit_config(tmp_path: Path) -> Path:
    config = {
        "trainer": {
            "max_epochs": 2,
            "enable_progress_bar": False,
            "callbacks": [
                {
                    "class_path": "callbacks.evaluation.SuccessRateEvaluation",
                    "init_args": {"episodes_per_task": 1, "every_n_epochs": 1, "levels": ["train"]},
                },
                {"class_path": "lightning.pytorch.callbacks.ModelCheckpoint", "init_args": {"save_last": True}},
            ],
        },
        "data": {"collect_if_missing": 0, "batch_size": 8, "batches_per_epoch": 3, "evaluation_batches": 1},
    }
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def sweep_file(tmp_path: Path, variants: dict, seeds: list[int]) -> Path:
    spec = {
        "configs": ["lightning_config/babyai/bc.yaml"],
        "variants": variants,
        "seeds": seeds,
        "options": ["--config", str(tiny_fit_config(tmp_path))],
        "out": str(tmp_path / "sweep"),
    }
    path = tmp_path / "tiny-sweep.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def test_the_grid_is_every_config_variant_and_seed(tmp_path):
    path = tmp_path / "grid.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "configs": ["lightning_config/babyai/bc.yaml", "lightning_config/babyai/iql.yaml"],
                "variants": {"real": REAL_ONLY, "real+imaginary": []},
                "seeds": [0, 1, 2],
                "options": ["--trainer.max_epochs", 5],
            }
        )
    )
    sweep = read_sweep(path)
    assert len(sweep.cells) == 12 and sweep.out == (Path("runs") / "sweeps" / "grid").resolve()
    cell = sweep.cells[0]
    assert (cell.name, cell.seed, cell.options) == ("babyai-bc-real", 0, ["--trainer.max_epochs", "5", *REAL_ONLY])
    assert Path(cell.config).is_absolute()  # cells run from the repository, whatever the caller's directory
    arguments = cell.fit_arguments(tmp_path, resume=False)
    assert arguments[arguments.index("--run_name") + 1] == "seed0" and "--ckpt_path" not in arguments
    assert cell.fit_arguments(tmp_path, resume=True)[-2:] == ["--ckpt_path", "last"]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"configs": [], "variants": {"real": []}, "seeds": [0]}, "field 'configs' must be a non-empty list"),
        ({"configs": ["nope.yaml"], "variants": {"real": []}, "seeds": [0]}, "configs: nope.yaml does not exist"),
        ({"configs": ["lightning_config/babyai/bc.yaml"], "variants": {"r": []}, "seeds": [0], "x": 1}, "unknown"),
        ({"configs": ["lightning_config/babyai/bc.yaml"], "variants": {"r": "--data.x 1"}, "seeds": [0]}, "r: options"),
    ],
)
def test_a_bad_sweep_file_is_named(tmp_path, spec, message):
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(spec))
    with pytest.raises(UserInputError, match=message):
        read_sweep(path)


def test_a_sweep_runs_on_ray_resumes_and_reports_failures(tmp_path, babyai_data_root, capsys):  # noqa: F811
    variants = {"real": REAL_ONLY, "broken": [*REAL_ONLY, "--model.init_args.no_such_option", "1"]}
    path = sweep_file(tmp_path, variants, seeds=[0, 1])
    out = tmp_path / "sweep"
    with pytest.raises(SystemExit) as exit_status:
        main(["sweep", "--config", str(path), "--workers", "2"])
    assert exit_status.value.code == 1
    printed = capsys.readouterr().out
    assert "sweep: 2 cells done, 0 finished before, 2 failed: babyai-bc-broken/seed0, babyai-bc-broken/seed1" in printed
    for seed in (0, 1):
        record = json.loads((out / "babyai-bc-real" / f"seed{seed}" / DONE_FILE).read_text())
        assert record["seed"] == seed and 0.0 <= record["success/train"] <= 1.0 and record["commit"]
    assert "no_such_option" in (out / "logs" / "babyai-bc-broken-seed0.log").read_text()

    # An interruption: seed 1 lost its completion record but kept its checkpoints; seed 0 is finished.
    (out / "babyai-bc-real" / "seed1" / DONE_FILE).unlink()
    finished = (out / "babyai-bc-real" / "seed0" / DONE_FILE).stat().st_mtime_ns
    path.write_text(yaml.safe_dump({**yaml.safe_load(path.read_text()), "variants": {"real": REAL_ONLY}}))
    main(["sweep", "--config", str(path), "--workers", "2"])
    assert "sweep: 1 cells done, 1 finished before, 0 failed" in capsys.readouterr().out
    assert (out / "babyai-bc-real" / "seed0" / DONE_FILE).stat().st_mtime_ns == finished
    assert "--ckpt_path last" in (out / "logs" / "babyai-bc-real-seed1.log").read_text()
    assert (out / "babyai-bc-real" / "seed1" / DONE_FILE).is_file()


@pytest.mark.parametrize("path", sorted((Path(__file__).resolve().parents[1] / "sweeps").glob("*.yaml")), ids=str)
def test_every_shipped_sweep_file_reads(path):
    sweep = read_sweep(path)
    assert sweep.cells and len({(cell.name, cell.seed) for cell in sweep.cells}) == len(sweep.cells)

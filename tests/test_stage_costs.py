"""The pipeline's cost file: what a resumed stage adds, and how a damaged or foreign file is refused."""

from __future__ import annotations

import json

import pytest

from imaginebench.errors import UserInputError
from imaginebench.provenance import machine_name
from imaginebench.stage_costs import RESUMED, StageCosts, read_stage_costs


def spend_cpu() -> None:
    sum(i * i for i in range(200_000))


def test_a_finished_stage_resumed_again_adds_its_cost_and_keeps_its_work(tmp_path):
    costs = StageCosts(tmp_path, "BabyAI-v0")
    with costs.measure("fit bc", "bc.yaml"):
        spend_cpu()
    first = read_stage_costs(costs.path)["stages"]["fit bc"]
    with StageCosts(tmp_path, "BabyAI-v0").measure("fit bc", "bc.yaml", resumed=True):
        spend_cpu()
    again = read_stage_costs(costs.path)["stages"]["fit bc"]
    assert again["work"] == "bc.yaml" and again["machine"] == first["machine"] == machine_name()
    assert again["cpu_s"] > first["cpu_s"] > 0 and again["wall_s"] > first["wall_s"] > 0


def test_a_stage_resumed_without_an_earlier_record_says_it_counts_only_its_part(tmp_path):
    with StageCosts(tmp_path, "BabyAI-v0").measure("ground", "babyai.yaml on cpu", resumed=True):
        spend_cpu()
    assert read_stage_costs(tmp_path / "stage_costs.json")["stages"]["ground"]["work"] == "babyai.yaml on cpu" + RESUMED


def test_a_rerun_stage_replaces_its_record(tmp_path):
    for work in ("first", "second"):
        with StageCosts(tmp_path, "BabyAI-v0").measure("collect", work):
            pass
    assert list(read_stage_costs(tmp_path / "stage_costs.json")["stages"].values())[0]["work"] == "second"


@pytest.mark.parametrize(
    ("content", "field"),
    [
        ("{not json", "cannot read"),
        ("[]", "env_id"),
        ('{"env_id": "BabyAI-v0"}', "field stages"),
        (
            '{"env_id": "BabyAI-v0", "stages": {"fit": {"work": "x", "cpu_s": "1", "wall_s": 1, "machine": "m"}}}',
            "stages.fit.cpu_s",
        ),
        ('{"env_id": "BabyAI-v0", "stages": {"fit": 3}}', "stages.fit.work"),
    ],
)
def test_a_damaged_cost_file_stops_the_pipeline_in_one_line_and_is_left_as_it_was(tmp_path, content, field):
    path = tmp_path / "stage_costs.json"
    path.write_text(content)
    with pytest.raises(UserInputError, match=field) as error:
        StageCosts(tmp_path, "BabyAI-v0")
    assert str(path) in str(error.value) and "\n" not in str(error.value)
    assert path.read_text() == content


def test_an_out_directory_of_another_env_is_refused_naming_the_option(tmp_path):
    with StageCosts(tmp_path, "Ball-v0").measure("collect", "10 episodes"):
        pass
    before = (tmp_path / "stage_costs.json").read_text()
    with pytest.raises(UserInputError, match="--out: .* holds a pipeline of Ball-v0"):
        StageCosts(tmp_path, "BabyAI-v0")
    assert (tmp_path / "stage_costs.json").read_text() == before


def test_the_machine_name_says_how_many_cores_the_process_may_use():
    assert machine_name().endswith(" cores") or machine_name().endswith(" core")
    assert json.dumps(machine_name())  # a plain string, stored as is

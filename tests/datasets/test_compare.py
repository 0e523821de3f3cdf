from dataclasses import replace

from imaginebench.datasets.compare import dataset_differences
from tests.synthetic_episodes import synthetic_dataset


def test_differences_name_each_changed_field_but_not_the_command_line():
    dataset = synthetic_dataset(seed=0, produced_by={"command": "imaginebench collect", "config": {"seed": 0}})
    rerun = replace(
        dataset, metadata={**dataset.metadata, "produced_by": {"command": "python -c ...", "config": {"seed": 0}}}
    )
    assert dataset_differences(dataset, rerun) == []
    steps = dataset.steps.clone()
    steps["reward"][3] += 1.0
    changed = replace(
        dataset,
        steps=steps,
        instruction_texts=[*dataset.instruction_texts[:-1], "another goal"],
        metadata={**dataset.metadata, "produced_by": {"command": "", "config": {"seed": 1}}},
    )
    assert dataset_differences(dataset, changed) == ["steps.reward", "instruction_texts", "metadata.produced_by"]

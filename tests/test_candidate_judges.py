"""benchmarks/candidate_judges.py scores a rollout with the losses grounding trains: the explanation score is the
summed log-likelihood whose mean is the text loss, the consequence score the one whose mean is the state loss."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch

from modules.grounding.generation import ImaginedBatch
from tests.grounding_fixtures import tiny_datamodule, tiny_module

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("candidate_judges", REPO / "benchmarks" / "candidate_judges.py")
candidate_judges = importlib.util.module_from_spec(spec)
spec.loader.exec_module(candidate_judges)


@pytest.fixture(scope="module")
def module_and_rollout(babyai_real, rollouts):
    torch.manual_seed(0)
    module = tiny_module(tiny_datamodule(babyai_real), state_values=15).eval()
    return module, rollouts[0]


def as_batch(rollout) -> ImaginedBatch:
    steps = len(rollout.actions)
    return ImaginedBatch(
        rollout.states[None], rollout.actions[None], torch.zeros(1, steps + 1, dtype=torch.bool), torch.tensor([steps])
    )


def collated(module, sequence) -> dict[str, torch.Tensor]:
    return module.builder.collate([sequence])


def test_the_explanation_score_sums_what_the_text_loss_averages(module_and_rollout):
    module, rollout = module_and_rollout
    sequence = module.builder.explanation(*module.explained_part(rollout.states, rollout.actions), rollout.instruction)
    with torch.no_grad():
        loss = module.losses(collated(module, sequence))["text"]
    tokens = int(sequence.supervised[1:].sum())
    score = candidate_judges.explanation_scores(module, as_batch(rollout), [rollout.instruction])
    assert score.shape == (1,)
    torch.testing.assert_close(score[0], -loss * tokens, rtol=1e-4, atol=1e-4)
    other = candidate_judges.explanation_scores(module, as_batch(rollout), ["go to the purple box"])
    assert not torch.isclose(other[0], score[0])


def test_the_consequence_score_sums_what_the_state_loss_averages(module_and_rollout):
    module, rollout = module_and_rollout
    final = rollout.states[-1]
    sequence = module.builder.consequence(rollout.instruction, rollout.states[0], final)
    with torch.no_grad():
        loss = module.losses(collated(module, sequence))["state"]
    score = candidate_judges.consequence_scores(module, as_batch(rollout), [rollout.instruction])
    torch.testing.assert_close(score[0], -loss * final.numel(), rtol=1e-4, atol=1e-4)

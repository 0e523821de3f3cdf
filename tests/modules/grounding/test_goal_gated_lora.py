"""LoRA off at the goal: prompts flag the goal's tokens, and the gate keeps the pretrained encoding there."""

from __future__ import annotations

import pytest
import torch

from imaginebench.errors import UserInputError
from modules.grounding.generation import _Decoder
from tests.grounding_fixtures import tiny_datamodule, tiny_module


def gated_module(babyai_real):
    """A tiny module with the gate and an adapter that changes the backbone (LoRA's B starts at zero)."""
    datamodule = tiny_datamodule(babyai_real)
    torch.manual_seed(0)
    module = tiny_module(datamodule, pretrained_goal_tokens=True).eval()
    with torch.no_grad():
        for layer in module.goal_gate.layers:
            layer.weight.normal_(0.0, 0.5)
    return module, datamodule.train_rollouts[:2]


def test_prompts_flag_the_goal_and_its_label_and_keep_their_tokens(babyai_real):
    datamodule = tiny_datamodule(babyai_real)
    builder = tiny_module(datamodule).builder
    rollout = datamodule.train_rollouts[0]
    generation = builder.generation(rollout.instruction, rollout.states[:3], rollout.actions[:2])
    text = generation.token_ids[generation.kinds == 0].tolist()
    assert text == list(builder.tokenize(f"Instruction: {rollout.instruction} Rollout:"))
    assert generation.token_ids[generation.goal].tolist() == list(
        builder.tokenize(f"Instruction: {rollout.instruction}")
    )
    assert generation.goal[: generation.goal.sum()].all()  # the prompt begins with them
    consequence = builder.consequence(rollout.instruction, rollout.states[0], rollout.states[-1])
    assert consequence.token_ids[consequence.goal].tolist() == list(
        builder.tokenize(f"Instruction: {rollout.instruction}")
    )
    assert not builder.dynamics(rollout.states[0], rollout.actions[0], rollout.states[1]).goal.any()
    assert not builder.explanation(rollout.states, rollout.actions, rollout.instruction).goal.any()
    batch = builder.collate([generation, consequence], pad_left=True)
    assert torch.equal(batch["goal"].sum(1), torch.stack([generation.goal.sum(), consequence.goal.sum()]))


def test_the_gated_adapter_encodes_the_goal_as_the_pretrained_backbone_and_adapts_what_follows(babyai_real):
    module, rollouts = gated_module(babyai_real)
    builder = module.builder
    batch = builder.collate(
        [builder.generation(r.instruction, r.states[:4], r.actions[:3]) for r in rollouts], pad_left=True
    )
    embeddings, mask, goal = module.embed(batch), batch["attention_mask"], batch["goal"]
    with torch.no_grad():
        gated = module.decode(embeddings, mask, goal=goal).last_hidden_state
        ungated = module.decode(embeddings, mask).last_hidden_state
        with module.lm.disable_adapter():
            pretrained = module.decode(embeddings, mask).last_hidden_state
    after = mask.bool() & ~goal
    torch.testing.assert_close(gated[goal], pretrained[goal])
    assert (ungated[goal] - pretrained[goal]).abs().max() > 1e-2  # without the gate the adapter moves the goal
    assert ((gated[after] - pretrained[after]).abs().amax(-1) > 1e-3).all()  # and with it, everything after
    with torch.no_grad():
        losses = module.losses(batch)["total"]
        without_goal = module.losses({k: v for k, v in batch.items() if k != "goal"})["total"]
    assert not torch.isclose(losses, without_goal)  # training passes the batch's goal to the gate


@pytest.mark.parametrize("use_cache", [True, False])
def test_decoding_slot_by_slot_with_the_gate_gives_a_full_gated_pass(babyai_real, use_cache):
    """Imagination prefills the goal's prompt, then feeds slots the gate leaves adapted."""
    module, rollouts = gated_module(babyai_real)
    builder = module.builder
    full = builder.collate(
        [builder.generation(r.instruction, r.states[:3], r.actions[:2]) for r in rollouts], pad_left=True
    )
    prompt_length = full["token_ids"].shape[1] - 4  # the last two steps are fed one slot at a time
    prompt = {key: value[:, :prompt_length] for key, value in full.items()}
    embeddings = module.embed(full)
    with torch.no_grad():
        reference = module.decode(embeddings, full["attention_mask"], goal=full["goal"]).last_hidden_state
        decoder = _Decoder(module, prompt, use_cache=use_cache)
        fed = [decoder.feed(embeddings[:, position]) for position in range(prompt_length, embeddings.shape[1])]
    torch.testing.assert_close(torch.stack(fed, 1), reference[:, prompt_length:], atol=1e-5, rtol=1e-5)


def test_the_gate_needs_a_lora_adapter(babyai_real):
    with pytest.raises(UserInputError, match="model.pretrained_goal_tokens"):
        tiny_module(tiny_datamodule(babyai_real), finetune="full", pretrained_goal_tokens=True)

"""The grounding module: slot embeddings, learning, LoRA, loading by path and slim checkpoints."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM

from datamodules.grounding_data import GroundingDataModule
from datamodules.grounding_prompts import GROUNDING_TASKS, STATE
from imaginebench.commands.lightning_cli import GroundingCLI
from imaginebench.errors import UserInputError
from modules.grounding.backbone import word_level_tokenizer
from modules.grounding.model import GroundingModule, use_attention_kernel
from tests.grounding_fixtures import TINY, fit_tiny, tiny_datamodule, tiny_module


def fixed_batch(module, datamodule, seed: int = 0):
    examples = datamodule._examples(datamodule.train_rollouts, __import__("numpy").random.default_rng(seed), 16)
    return module.on_before_batch_transfer(examples, 0)


def test_slot_embeddings_replace_token_embeddings_and_depend_on_the_state(babyai_real):
    datamodule = tiny_datamodule(babyai_real)
    module = tiny_module(datamodule)
    batch = fixed_batch(module, datamodule)
    embedded = module.embed(batch)
    tokens = module.lm.get_input_embeddings()(batch["token_ids"])
    is_slot = batch["kinds"] != 0
    torch.testing.assert_close(embedded[~is_slot], tokens[~is_slot])
    moved = {**batch, "states": batch["states"] + 1.0}
    changed = (module.embed(moved) - embedded).abs().sum(-1) > 0
    assert torch.equal(changed, batch["kinds"] == STATE)


def test_state_changes_are_measured_from_the_latest_earlier_state(babyai_real):
    datamodule = tiny_datamodule(babyai_real)
    module = tiny_module(datamodule, predict_state_change=True)
    rollout = datamodule.train_rollouts[0]
    batch = module.builder.collate([module.builder.generation(rollout.instruction, rollout.states, rollout.actions)])
    latest = module.latest_states(batch)[0]
    state_slots = (batch["kinds"][0] == STATE).nonzero().flatten().tolist()
    torch.testing.assert_close(latest[: state_slots[0]], module.state_mean.expand(state_slots[0], -1))  # no state yet
    for index, slot in enumerate(state_slots):
        end = state_slots[index + 1] if index + 1 < len(state_slots) else latest.shape[0]
        torch.testing.assert_close(latest[slot:end], rollout.states[index].expand(end - slot, -1))
    change = module.state_target(rollout.states[1], rollout.states[0])
    with torch.no_grad():
        module.state_head.weight.zero_()
        module.state_head.bias.zero_()
        torch.testing.assert_close(
            module.predict_state(torch.randn(1, 32), rollout.states[0:1]), rollout.states[0:1]
        )  # no change predicted
    assert torch.equal(change == 0, rollout.states[1] == rollout.states[0])  # unchanged dimensions have target 0


def test_lora_trains_only_the_adapter_and_the_new_projections_and_heads(babyai_real):
    module = tiny_module(tiny_datamodule(babyai_real))
    trainable = {name for name, p in module.named_parameters() if p.requires_grad}
    assert any("lora_A" in name for name in trainable) and any("lora_B" in name for name in trainable)
    assert {
        "state_projection.weight",
        "state_head.weight",
        "action_projection.weight",
        "action_head.weight",
    } <= trainable
    frozen_backbone = [
        n for n in trainable if n.startswith("lm.") and "lora_" not in n and not ("embed_tokens" in n or "lm_head" in n)
    ]
    assert not frozen_backbone  # attention and MLP weights train only through the adapter
    assert any("embed_tokens" in n for n in trainable) and any(
        "lm_head" in n for n in trainable
    )  # a new vocabulary trains
    full = tiny_module(tiny_datamodule(babyai_real), finetune="full")
    assert all(p.requires_grad for p in full.parameters())


@pytest.mark.parametrize("finetune", ["lora", "full"])
def test_backbone_lr_puts_the_backbone_and_only_the_backbone_at_its_own_rate(babyai_real, finetune):
    datamodule = tiny_datamodule(babyai_real)
    module = tiny_module(datamodule, finetune=finetune, backbone_lr=1e-4, lr=1e-2)
    optimizer = module.configure_optimizers()["optimizer"]
    backbone, rest = optimizer.param_groups
    assert (backbone["initial_lr"], rest["initial_lr"]) == (1e-4, 1e-2)  # before the warmup scales them
    trained = [p for p in module.parameters() if p.requires_grad]
    assert sorted(map(id, backbone["params"] + rest["params"])) == sorted(map(id, trained))  # each once
    in_backbone = {id(p) for p in module.lm.parameters()}
    assert all(id(p) in in_backbone for p in backbone["params"])
    assert {"state_head.weight", "action_projection.weight"} <= {
        name for name, p in module.named_parameters() if any(p is q for q in rest["params"])
    }
    single = tiny_module(datamodule, finetune=finetune).configure_optimizers()["optimizer"].param_groups
    assert len(single) == 1  # without the option the optimizer is as before, so older runs resume
    with pytest.raises(UserInputError, match="model.backbone_lr"):
        tiny_module(datamodule, backbone_lr=0.0)


@pytest.mark.parametrize(
    "finetune, state_head",
    [
        ("full", {}),
        ("lora", {}),
        ("lora", {"predict_state_change": True}),
        ("lora", {"state_values": 8}),
        ("lora", {"state_values": 8, "copy_values": True}),
        ("lora", {"predict_state_change": True, "still_tolerance": 0.5}),
        ("lora", {"predict_state_change": True, "state_change_bin_width": 0.5, "max_state_change": 2.0}),
    ],
)
def test_fitting_a_fixed_batch_cuts_every_loss(babyai_real, finetune, state_head):
    """A broken mask, shift or slot injection would leave at least one loss near where it started."""
    torch.manual_seed(0)
    datamodule = tiny_datamodule(babyai_real)
    module = tiny_module(datamodule, finetune=finetune, **state_head)
    batch = fixed_batch(module, datamodule)
    before = {k: float(v) for k, v in module.losses(batch).items()}
    optimizer = torch.optim.Adam(
        [p for p in module.parameters() if p.requires_grad], lr=1e-2 if finetune == "lora" else 3e-3
    )
    for _ in range(60):
        optimizer.zero_grad()
        module.losses(batch)["total"].backward()
        optimizer.step()
    after = {k: float(v) for k, v in module.losses(batch).items()}
    for name in ("state", "action", "text"):
        assert after[name] < 0.5 * before[name], (name, before, after)


def test_eager_attention_computes_what_the_default_kernel_does_forward_and_backward(babyai_real):
    """The CPU-speed option swaps the kernel, not the arithmetic: same losses and gradients as sdpa."""
    datamodule = tiny_datamodule(babyai_real)
    grads = {}
    for kernel in ("sdpa", "eager"):
        torch.manual_seed(0)
        module = tiny_module(datamodule, attn_implementation=kernel)
        assert module.lm.config._attn_implementation == kernel
        losses = module.losses(fixed_batch(module, datamodule))
        losses["total"].backward()
        grads[kernel] = (losses, {n: p.grad for n, p in module.named_parameters() if p.grad is not None})
    (sdpa_losses, sdpa_grads), (eager_losses, eager_grads) = grads["sdpa"], grads["eager"]
    assert all(torch.allclose(sdpa_losses[k], eager_losses[k], atol=1e-5) for k in sdpa_losses)
    assert sdpa_grads.keys() == eager_grads.keys()
    assert all(torch.allclose(sdpa_grads[n], eager_grads[n], atol=1e-5) for n in sdpa_grads)


def test_an_unknown_attention_kernel_is_refused_before_the_backbone_is_built(babyai_real, monkeypatch):
    datamodule = tiny_datamodule(babyai_real)

    def build_backbone(*args, **kwargs):
        raise AssertionError("the backbone was built before the option was checked")

    monkeypatch.setattr("modules.grounding.model.build_backbone", build_backbone)
    with pytest.raises(UserInputError, match="model.attn_implementation"):
        tiny_module(datamodule, attn_implementation="flash")


def test_a_backbone_that_keeps_its_own_attention_kernel_is_an_error():
    """transformers only warns when a model cannot switch kernels; a silent fallback would hide the choice."""
    config = SimpleNamespace(_attn_implementation="sdpa")
    stubborn = SimpleNamespace(config=config, set_attn_implementation=lambda kernel: None)
    with pytest.raises(UserInputError, match="model.attn_implementation"):
        use_attention_kernel(stubborn, "eager")


def test_cached_decoding_with_eager_attention_gives_the_logits_of_a_full_pass(babyai_real):
    """Imagination feeds one slot at a time through a KV cache; eager attention must mask it as a full pass does."""
    datamodule = tiny_datamodule(babyai_real)
    torch.manual_seed(0)
    module = tiny_module(datamodule, attn_implementation="eager").eval()
    rollouts = datamodule.train_rollouts[:2]
    examples = [module.builder.generation(r.instruction, r.states[:4], r.actions[:3]) for r in rollouts]
    batch = module.builder.collate(examples, pad_left=True)  # left padding, as imagination's prompts have
    head = module.lm.get_output_embeddings()
    with torch.no_grad():
        embeddings, mask = module.embed(batch), batch["attention_mask"]
        full = head(module.decode(embeddings, mask).last_hidden_state)
        prefix = embeddings.shape[1] - 4
        output = module.decode(embeddings[:, :prefix], mask[:, :prefix], use_cache=True)
        cached = [head(output.last_hidden_state)]
        for position in range(prefix, embeddings.shape[1]):
            step = embeddings[:, position : position + 1]
            output = module.decode(
                step, mask[:, : position + 1], past_key_values=output.past_key_values, use_cache=True
            )
            cached.append(head(output.last_hidden_state))
    real = mask.bool()
    torch.testing.assert_close(torch.cat(cached, 1)[real], full[real], atol=1e-5, rtol=1e-5)


def test_a_backbone_saved_with_save_pretrained_loads_by_path_with_identical_logits(tmp_path, babyai_real):
    tokenizer = word_level_tokenizer(["go", "to", "the", "red", "ball"])
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
    )
    torch.manual_seed(1)
    original = LlamaForCausalLM(config).eval()
    original.save_pretrained(tmp_path / "backbone")
    tokenizer.save_pretrained(tmp_path / "backbone")
    datamodule = tiny_datamodule(babyai_real)
    module = GroundingModule(datamodule.env_spec, backbone=str(tmp_path / "backbone")).eval()
    ids = torch.tensor([tokenizer("go to the red ball", add_special_tokens=False)["input_ids"]])
    with torch.no_grad():
        expected = original(input_ids=ids).logits
        assert torch.equal(module.lm(input_ids=ids).logits, expected)  # LoRA starts as the identity (B = 0)
        hidden = module.decode(module.lm.get_input_embeddings()(ids), torch.ones_like(ids)).last_hidden_state
        assert torch.equal(module.lm.get_output_embeddings()(hidden), expected)
    trainable = [n for n, p in module.named_parameters() if p.requires_grad and n.startswith("lm.")]
    assert trainable and all("lora_" in n for n in trainable)  # a pretrained vocabulary stays frozen


def test_missing_backbone_or_tokenizer_directory_is_a_clear_error(tmp_path, babyai_real):
    spec = tiny_datamodule(babyai_real).env_spec
    with pytest.raises(UserInputError, match="model.backbone"):
        GroundingModule(spec, backbone=str(tmp_path / "nope"), tokenizer=None)
    with pytest.raises(UserInputError, match="model.tokenizer"):
        GroundingModule(spec, tokenizer=str(tmp_path / "nope"))
    with pytest.raises(ValueError, match="vocabulary"):
        GroundingModule(spec)


def test_lora_checkpoint_leaves_out_the_frozen_backbone_and_reloads_exactly(tmp_path, babyai_real):
    module, path, datamodule = fit_tiny(tmp_path, babyai_real)
    saved = torch.load(path, weights_only=False)["state_dict"]
    frozen = {name for name, p in module.named_parameters() if not p.requires_grad}
    assert frozen and not frozen & set(saved)
    assert any("lora_B" in name and saved[name].abs().sum() > 0 for name in saved)  # the adapter did train
    reloaded = GroundingModule.load_from_checkpoint(path).eval()
    module.eval()
    batch = fixed_batch(module, datamodule, seed=5)
    with torch.no_grad():
        for name, value in module.losses(batch).items():
            assert torch.equal(reloaded.losses(batch)[name], value), name
    torch.testing.assert_close(reloaded.state_mean, datamodule.state_statistics()[0])


def test_a_checkpoint_refuses_a_different_backbone(tmp_path, babyai_real):
    _, path, _ = fit_tiny(tmp_path, babyai_real)
    with pytest.raises(ValueError, match="backbone"):
        GroundingModule.load_from_checkpoint(path, init_seed=1)


def test_a_value_state_head_reads_and_predicts_each_dimension_as_a_symbol(babyai_real):
    """With ``state_values``: a slot is a sum of per-(dimension, value) embeddings, and the head
    classifies each dimension's next value, so a picked-up object lands on its fixed value."""
    datamodule = tiny_datamodule(babyai_real)
    module = tiny_module(datamodule, state_values=8)
    assert module.state_head.value_logits.out_features == 17 * 8
    state = datamodule.train_rollouts[0].states[0:1]
    moved = state.clone()
    moved[0, 13] = (moved[0, 13] + 1) % 8
    swapped = state.clone()
    swapped[0, [13, 14]] = state[0, [14, 13]]
    embed = module.state_projection
    assert not torch.allclose(embed(state), embed(moved))
    if state[0, 13] != state[0, 14]:
        assert not torch.allclose(embed(state), embed(swapped))  # the dimension matters, not only the value
    head = module.state_head
    with torch.no_grad():
        head.value_logits.weight.zero_()
        head.value_logits.bias.zero_()
        head.change_logits.weight.zero_()
    torch.testing.assert_close(module.predict_state(torch.randn(1, 32), state), state)  # copying is the prior
    if state[0, 13] < 7:
        with torch.no_grad():
            head.change_logits.bias.view(17, 15)[13, 7 + 1] = 10.0  # dimension 13 changes by +1, whatever its value
        expected = state.clone()
        expected[0, 13] += 1
        torch.testing.assert_close(module.predict_state(torch.randn(1, 32), state), expected)
        with torch.no_grad():
            head.change_logits.bias.view(17, 15)[13, 7 + 1] = 0.0
    target = state.clone()
    target[0, 0:2] = 0.0  # e.g. a carried object's position, whatever it was
    bias = torch.full((17, 8), -5.0)
    bias[torch.arange(17), target[0].long()] = 5.0
    with torch.no_grad():
        head.value_logits.bias.copy_(bias.flatten())
    torch.testing.assert_close(module.predict_state(torch.randn(1, 32), state), target)
    assert float(module.state_loss(torch.randn(1, 32), target, state)) < 0.01
    assert float(module.state_loss(torch.randn(1, 32), moved, state)) > 0.2
    with pytest.raises(ValueError, match="state_values"):
        tiny_module(datamodule, predict_state_change=True, state_values=8)


def test_a_copying_value_head_gives_a_dimension_the_value_another_has_now(babyai_real):
    """With ``copy_values``: a pointer logit per (dimension, source) pair puts a dimension on the source's current
    value, whichever it is (a drop lands on the agent's cell); the term starts at zero, so the head starts as
    without it."""
    datamodule = tiny_datamodule(babyai_real)
    module = tiny_module(datamodule, state_values=8, copy_values=True)
    head = module.state_head
    state = datamodule.train_rollouts[0].states[0:1]
    hidden = torch.randn(1, 32)
    plain = tiny_module(datamodule, state_values=8)
    plain.state_head.load_state_dict({k: v for k, v in head.state_dict().items() if not k.startswith("copy")})
    torch.testing.assert_close(head(hidden, state), plain.state_head(hidden, state))
    with torch.no_grad():
        head.copy_logits.bias.view(17, 17)[1, 13] = 20.0  # dimension 1 (ball row) takes the agent's row
    for agent_row in (2.0, 5.0):
        placed = state.clone()
        placed[0, 13] = agent_row
        expected = placed.clone()
        expected[0, 1] = agent_row
        torch.testing.assert_close(module.predict_state(hidden, placed), expected)
    with pytest.raises(UserInputError, match="model.copy_values"):
        tiny_module(datamodule, copy_values=True)


def test_a_lora_checkpoint_of_a_tied_embedding_backbone_leaves_out_both_aliases(tmp_path, babyai_real):
    """SmolLM2 ties ``lm_head`` to its embedding: the frozen 28M-parameter matrix must not be saved."""
    tokenizer = word_level_tokenizer(["go", "to", "the", "red", "ball"])
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
        intermediate_size=64,
        tie_word_embeddings=True,
    )
    LlamaForCausalLM(config).save_pretrained(tmp_path / "backbone")
    tokenizer.save_pretrained(tmp_path / "backbone")
    module = GroundingModule(tiny_datamodule(babyai_real).env_spec, backbone=str(tmp_path / "backbone"))
    checkpoint = {"state_dict": module.state_dict()}
    assert any("lm_head" in name for name in checkpoint["state_dict"])
    module.on_save_checkpoint(checkpoint)
    saved_backbone = [name for name in checkpoint["state_dict"] if name.startswith("lm.")]
    assert saved_backbone and all("lora_" in name for name in saved_backbone)


def predict_with_fixed_head(
    module: GroundingModule, datamodule: GroundingDataModule, layer: torch.nn.Linear, bias: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """The state the head predicts from a state of the data when ``layer`` outputs ``bias`` whatever
    it reads; every dimension but 13 is asserted to keep its value bit for bit."""
    previous = datamodule.train_rollouts[0].states[0:1] + 0.123
    with torch.no_grad():
        layer.weight.zero_()
        layer.bias.copy_(bias.flatten())
    predicted = module.predict_state(torch.randn(1, 32), previous)
    still = torch.arange(17) != 13
    assert torch.equal(predicted[0, still], previous[0, still])
    return previous, predicted


def test_a_gated_change_head_keeps_dimensions_judged_still_exactly(babyai_real):
    """With ``still_tolerance``: a dimension whose moving logit is negative keeps its value bit for bit,
    one judged moving gets the regressed change; the loss counts both parts."""
    datamodule = tiny_datamodule(babyai_real)
    module = tiny_module(datamodule, predict_state_change=True, still_tolerance=0.01)
    module.hparams.round_states = False  # BabyAI stands in for a continuous env here
    assert module.state_head.out_features == 17 * 2
    bias = torch.zeros(17, 2)
    bias[:, 0] = 0.5  # a change of half a standard deviation everywhere ...
    bias[:, 1] = -5.0  # ... but every dimension is judged still ...
    bias[13, 1] = 5.0  # ... except dimension 13
    previous, predicted = predict_with_fixed_head(module, datamodule, module.state_head, bias)
    torch.testing.assert_close(predicted[0, 13], previous[0, 13] + 0.5 * module.state_std[13])
    assert float(module.state_loss(torch.randn(1, 32), predicted, previous)) < 0.05  # what the head says, almost surely
    assert float(module.state_loss(torch.randn(1, 32), previous, previous)) > 0.2  # dimension 13 did not move after all
    with pytest.raises(ValueError, match="still_tolerance"):
        tiny_module(datamodule, still_tolerance=0.01)


def test_standardized_changes_are_divided_by_the_typical_real_change_not_the_spread_of_states(babyai_real):
    """With ``standardize_changes`` the regressed target of a real change has a root mean square of 1 in every
    dimension that moves (beyond ``still_tolerance``); the head's output maps back to the same change."""
    datamodule = tiny_datamodule(babyai_real)
    module = tiny_module(datamodule, predict_state_change=True, still_tolerance=0.5, standardize_changes=True)
    module.hparams.round_states = False  # BabyAI stands in for a continuous env here
    states = torch.cat([r.states[:-1] for r in datamodule.train_rollouts])
    following = torch.cat([r.states[1:] for r in datamodule.train_rollouts])
    target = module.state_target(following, states)
    moved = (following - states).abs() > 0.5
    rms = ((target.square() * moved).sum(0) / moved.sum(0).clamp_min(1)).sqrt()
    moving = moved.any(0)
    assert moving.sum() >= 3 and not torch.equal(module.change_scale, module.state_std)
    torch.testing.assert_close(rms[moving], torch.ones(int(moving.sum())), rtol=1e-4, atol=1e-4)
    bias = torch.zeros(17, 2)
    bias[:, 0], bias[:, 1] = 0.5, -5.0
    bias[13, 1] = 5.0  # dimension 13 moves by half its typical change
    previous, predicted = predict_with_fixed_head(module, datamodule, module.state_head, bias)
    torch.testing.assert_close(predicted[0, 13], previous[0, 13] + 0.5 * module.change_scale[13])
    with pytest.raises(ValueError, match="standardize_changes"):
        tiny_module(datamodule, standardize_changes=True)


def test_a_binned_change_head_adds_its_argmax_bin_and_keeps_the_zero_bin_exact(babyai_real):
    """With ``state_change_bin_width``: a dimension's predicted change is its most likely bin's centre
    (zero exactly in the middle bin); the loss is the cross-entropy of the observed change's bin."""
    datamodule = tiny_datamodule(babyai_real)
    module = tiny_module(datamodule, predict_state_change=True, state_change_bin_width=0.25, max_state_change=1.0)
    module.hparams.round_states = False  # BabyAI stands in for a continuous env here
    head = module.state_head
    assert head.bins == 9 and head.logits.out_features == 17 * 9
    bias = torch.full((17, 9), -10.0)
    bias[:, 4] = 10.0  # every dimension keeps its value ...
    bias[13, 4], bias[13, 7] = -10.0, 10.0  # ... except dimension 13, which moves by three bins
    previous, predicted = predict_with_fixed_head(module, datamodule, head.logits, bias)
    torch.testing.assert_close(predicted[0, 13], previous[0, 13] + 0.75)
    near = predicted + 0.1  # within half a bin of what the head says: the same bins
    assert float(module.state_loss(torch.randn(1, 32), near, previous)) < 1e-3
    assert float(module.state_loss(torch.randn(1, 32), previous, previous)) > 0.5  # dimension 13 did not move
    far = previous + 5.0  # beyond max_state_change: the outermost bin
    assert torch.equal(head.target_bins(far - previous), torch.full((1, 17), 8))
    with pytest.raises(ValueError, match="state_change_bin_width"):
        tiny_module(datamodule, state_change_bin_width=0.25, max_state_change=1.0)


def test_the_data_window_reaches_the_model_hyperparameters_through_the_cli(babyai_real):
    """``data.window_steps`` is linked into the model, so its checkpoint tells imagination the window to slide by."""
    tiny = [f"--model.{name}={value}" for name, value in TINY.items()]
    options = ["--data.real", f"[{babyai_real}]", "--data.window_steps", "3", "--trainer.logger", "false", *tiny]
    cli = GroundingCLI(GroundingModule, GroundingDataModule, run=False, args=options)
    assert cli.model.hparams.window_steps == cli.datamodule.hparams.window_steps == 3


def test_validation_explains_the_last_window_of_a_long_rollout(babyai_real):
    datamodule = tiny_datamodule(babyai_real)
    rollout = max(datamodule.val_rollouts + datamodule.train_rollouts, key=lambda r: len(r.actions))
    states, actions = tiny_module(datamodule, window_steps=3).explained_part(rollout.states, rollout.actions)
    assert torch.equal(states, rollout.states[-4:]) and torch.equal(actions, rollout.actions[-3:])
    whole = tiny_module(datamodule).explained_part(rollout.states, rollout.actions)
    assert whole[0] is rollout.states and whole[1] is rollout.actions


SUPERVISED_KINDS = {
    "generation": {"state", "action"},
    "dynamics": {"state"},
    "consequence": {"state"},
    "explanation": {"text"},
}


def test_validation_logs_each_grounding_tasks_losses_over_its_own_rows(babyai_real):
    """``val/loss_state`` mixes one-step predictions with whole-rollout consequence jumps; each task's figure alone
    is what tells how well the model knows the dynamics."""
    from lightning.pytorch import Trainer

    datamodule = tiny_datamodule(babyai_real, batch_size=32)
    module = tiny_module(datamodule)
    trainer = Trainer(
        logger=False, enable_progress_bar=False, enable_model_summary=False, limit_val_batches=1, accelerator="cpu"
    )
    trainer.validate(module, datamodule, verbose=False)
    metrics = trainer.callback_metrics
    batch = module.on_before_batch_transfer(next(iter(datamodule.val_dataloader())), 0)
    assert set(batch["task"].tolist()) == set(range(len(GROUNDING_TASKS)))
    for task in GROUNDING_TASKS:
        rows = batch["task"] == GROUNDING_TASKS.index(task)
        with torch.no_grad():
            expected = module.losses({key: value[rows] for key, value in batch.items()})
        logged = {name.removeprefix(f"val/{task}/loss_") for name in metrics if name.startswith(f"val/{task}/")}
        assert logged == SUPERVISED_KINDS[task] | {"total"}
        for name in logged:
            assert float(metrics[f"val/{task}/loss_{name}"]) == pytest.approx(float(expected[name]), rel=1e-4)

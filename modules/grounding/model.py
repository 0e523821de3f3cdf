"""The grounding LightningModule: a causal LM with state/action slots and state/action heads (KALM).

Input side: a linear projection of each (standardised) state, and an embedding of each discrete
action or a linear projection of each continuous one, overwrite the token embeddings at slot
positions (KALM's released code also used a single linear layer). Output side: beside the LM's
text head, a state head (regression, MSE on standardised states) and an action head (cross-entropy
or MSE) read the final hidden state. Loss = ``state_loss_weight``·state + ``action_loss_weight``·action
+ ``text_loss_weight``·text, 0.5 / 0.5 / 1 as in KALM.

Fine-tuning is LoRA (``peft``) by default: a deliberate deviation from KALM's full fine-tune, so
that a 7B backbone trains on one GPU and a grounded model ships as a small adapter. The new
projections and heads always train fully. ``finetune="full"`` trains every weight.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any, Literal

import torch
import torch.nn.functional as F
from lightning.pytorch import LightningModule
from peft import LoraConfig, get_peft_model
from torch import Tensor, nn
from transformers import PreTrainedModel

from datamodules.grounding_prompts import ACTION, GROUNDING_TASKS, STATE, TEXT, SequenceBuilder
from imaginebench.env_spec import EnvSpec
from imaginebench.envs.action_frames import get_action_frame
from imaginebench.errors import UserInputError, check_at_least
from modules.grounding.backbone import build_backbone, fingerprint, load_tokenizer
from modules.grounding.binned_changes import BinnedChangeHead
from modules.grounding.generation import explain_rollouts, normalized, token_f1
from modules.grounding.goal_gated_lora import GoalGate
from modules.grounding.named_backbones import resolve_backbone
from modules.grounding.object_frames import ObjectFrameEncoder
from modules.grounding.state_action_encoder import StateActionEncoder
from modules.grounding.whole_number_states import WholeNumberStateEmbedding, WholeNumberStateHead

LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


ATTENTION_KERNELS = ("eager", "sdpa")


def check_attention_kernel(kernel: str | None) -> None:
    """Refuse an unknown ``model.attn_implementation`` before the (slow) backbone is built."""
    if kernel is not None and kernel not in ATTENTION_KERNELS:
        raise UserInputError(
            f"model.attn_implementation: must be 'eager' or 'sdpa' (null: transformers' default), got {kernel!r}"
        )


def use_attention_kernel(lm: PreTrainedModel, kernel: str) -> None:
    """Switch the backbone's attention kernel; transformers only warns when a model cannot switch, so check it did."""
    lm.set_attn_implementation(kernel)
    used = lm.config._attn_implementation
    if used != kernel:
        raise UserInputError(f"model.attn_implementation: the backbone did not accept {kernel!r} (it uses {used!r})")


class GroundingModule(LightningModule):
    """Grounds a causal LM in one env's states and actions; see the module docstring."""

    def __init__(
        self,
        env_spec: dict,
        backbone: str | None = None,
        backbone_layers: int | None = None,
        backbone_init: Literal["pretrained", "random"] = "pretrained",
        tokenizer: str | None = None,
        hidden_size: int = 128,
        num_layers: int = 4,
        num_heads: int = 4,
        intermediate_size: int = 512,
        max_positions: int = 1024,
        init_seed: int = 0,
        backbone_dtype: str = "float32",
        attn_implementation: Literal["eager", "sdpa"] | None = None,
        finetune: Literal["lora", "full"] = "lora",
        lora_rank: int = 16,
        lora_alpha: float = 32.0,
        lora_dropout: float = 0.0,
        lora_target_modules: list[str] | None = None,
        lr: float = 1e-3,
        backbone_lr: float | None = None,
        weight_decay: float = 0.0,
        warmup_steps: int = 100,
        state_loss_weight: float = 0.5,
        action_loss_weight: float = 0.5,
        text_loss_weight: float = 1.0,
        round_states: bool = False,
        explanation_eval_rollouts: int = 32,
        vocabulary: list[str] | None = None,
        predict_state_change: bool = False,
        state_values: int = 0,
        copy_values: bool = False,
        still_tolerance: float = 0.0,
        state_change_bin_width: float = 0.0,
        max_state_change: float = 0.0,
        standardize_changes: bool = False,
        window_steps: int | None = None,
        action_frame: str | None = None,
        action_reads_state: bool = False,
        pretrained_goal_tokens: bool = False,
    ) -> None:
        """``backbone``: a name from :data:`NAMED_BACKBONES` (e.g. ``smollm2-135m``, built offline into the cache on
        first use), a local HF directory, or None for a Llama of the given sizes built from a config (seeded by
        ``init_seed``). ``backbone_layers``: keep only the first k decoder layers of a pretrained backbone (cost falls
        with k). ``backbone_init: random`` builds the backbone's architecture with fresh weights under ``init_seed``
        (the ablation of the language prior: same layers, tokenizer and recipe, nothing learnt from text).
        ``attn_implementation``: transformers' attention kernel (default its own, ``sdpa``); the same arithmetic either
        way. Under ``bf16-mixed``, SmolLM2's 4-layer update was measured 1.2–1.35× cheaper with ``eager`` than with
        ``sdpa`` on a 2-core Xeon with AMX (0.71 / 0.83 vs 0.96 CPU s per update at 20 / 80 updates,
        ``benchmarks/grounding_update_cost.py``); in float32 the two cost the same up to rounding (1.06 vs 1.11 s).
        ``tokenizer``: a local directory; default the backbone's own, or the MiniLM WordPiece vocabulary for a
        from-config backbone. ``round_states``: the env's states are whole numbers (grids), so generated states are
        rounded. ``backbone_lr``: the learning rate of the backbone's trained weights (the LoRA adapter, or every weight
        with ``finetune: full``; a from-config backbone's new vocabulary too; default ``lr``), apart from the slots and
        heads, which start from nothing and keep ``lr``: a pretrained stack trained at the new layers' rate may lose
        what pretraining put in it.
        ``explanation_eval_rollouts``: held-out real rollouts explained after each validation. ``vocabulary``:
        the words of a from-config backbone's tokenizer (LightningCLI links it from the data); their embeddings and the
        text head train fully, even with LoRA, because a from-config backbone has no pretrained vocabulary to preserve.
        ``predict_state_change``: the state head predicts the change from the latest state earlier in the sequence (most
        dimensions do not change in a step, which is why learned dynamics models such as MBPO's predict differences);
        off, it predicts the state itself, as KALM did. ``state_values`` K > 0: for envs whose states are whole numbers
        in [0, K) (grids), a state slot is the sum of one learned embedding per dimension and value, and the state head
        classifies each dimension's next value (:class:`WholeNumberStateHead`), so a predicted state is exact or wrong,
        never off by a rounding error. ``copy_values`` (with ``state_values``): the head may also give a dimension the
        value another dimension has now (a drop puts the object on the agent's cell). ``still_tolerance`` t > 0 (with
        ``predict_state_change``): the head also classifies whether each dimension changes by more than t, and a
        dimension judged still keeps its value exactly (a regressed change is never exactly zero, so untouched objects
        would creep, e.g. CLEVR-Robot's balls out of the walls over a rollout). ``state_change_bin_width`` w > 0 (with
        ``predict_state_change``): the head classifies each dimension's change into bins of width w up to
        ``max_state_change`` (:class:`BinnedChangeHead`), so a generated change is one outcome the model saw, not a
        blend of several, and zero is exact. ``standardize_changes`` (with a regressed ``predict_state_change``): a
        change is divided by the root mean square of the real per-step changes of its dimension (those beyond
        ``still_tolerance``), not by the spread of the states: a Meta-World hand moves a few mm a step against a spread
        of ~10 cm, so with the states' scale a head that predicts no change at all costs almost nothing.
        ``window_steps`` W: the rollout window the generation and explanation examples were cut to (LightningCLI links
        it from ``data.window_steps``); kept here so imagination slides its context by the window the model was trained
        on, and validation explains the last W steps of each held-out rollout. ``action_frame``: the name of an
        :data:`~imaginebench.envs.action_frames.ACTION_FRAMES` entry; each action slot then also gets an encoding of the
        latest state seen from the action, object by object (CLEVR-Robot: every ball's offset along and across the push;
        :class:`ObjectFrameEncoder`), because the slots' flat coordinates and action symbols hide the geometry a
        collision depends on. ``action_reads_state``: each action slot also gets an MLP of the standardised latest state
        and the action (:class:`StateActionEncoder`), the input of a learned dynamics model, because a backbone that
        reads state and action in separate slots predicted HalfCheetah's next state with four times the squared error of
        an MLP. ``pretrained_goal_tokens`` (with LoRA): the adapter is off at the goal instruction's tokens, so they are
        encoded by the pretrained weights alone (:mod:`modules.grounding.goal_gated_lora`)."""
        super().__init__()
        if finetune not in ("lora", "full"):
            raise ValueError(f"grounding: finetune must be 'lora' or 'full', got {finetune!r}")
        if backbone_init not in ("pretrained", "random"):
            raise UserInputError(f"model.backbone_init: must be 'pretrained' or 'random', got {backbone_init!r}")
        if state_values < 0 or (state_values and predict_state_change):
            raise ValueError(
                f"grounding: state_values must be >= 0 and excludes predict_state_change, got {state_values}"
            )
        if copy_values and not state_values:
            raise UserInputError("model.copy_values: copies whole-number values; it needs model.state_values > 0")
        if still_tolerance < 0 or (still_tolerance and not predict_state_change):
            raise ValueError(
                f"grounding: still_tolerance must be >= 0 and needs predict_state_change, got {still_tolerance}"
            )
        if state_change_bin_width and (not predict_state_change or still_tolerance):
            raise ValueError(
                "grounding: state_change_bin_width needs predict_state_change and excludes still_tolerance"
            )
        if standardize_changes and (not predict_state_change or state_change_bin_width):
            raise ValueError(
                "grounding: standardize_changes scales a regressed change: it needs predict_state_change and no "
                "state_change_bin_width"
            )
        check_at_least(1, {"model.window_steps": window_steps})
        if backbone_lr is not None and backbone_lr <= 0:
            raise UserInputError(f"model.backbone_lr: must be > 0 (or null for model.lr), got {backbone_lr}")
        check_attention_kernel(attn_implementation)
        if pretrained_goal_tokens and finetune != "lora":
            raise UserInputError("model.pretrained_goal_tokens: switches the LoRA adapter off; it needs finetune: lora")
        self.save_hyperparameters()
        self.env_spec = EnvSpec(**env_spec)
        backbone_dir = resolve_backbone(backbone)
        self.tokenizer = load_tokenizer(tokenizer or backbone_dir, vocabulary)
        lm = build_backbone(
            backbone_dir,
            len(self.tokenizer),
            hidden_size,
            num_layers,
            num_heads,
            intermediate_size,
            max_positions,
            init_seed,
            backbone_dtype,
            backbone_layers,
            random_weights=backbone_init == "random",
        )
        if attn_implementation is not None:
            use_attention_kernel(lm, attn_implementation)
        self.base_fingerprint = fingerprint(list(lm.parameters()))
        if finetune == "lora":
            targets = list(lora_target_modules or LORA_TARGETS)
            vocabulary_layers = ["embed_tokens", "lm_head"] if backbone is None else None
            lora = LoraConfig(
                r=lora_rank,
                lora_alpha=lora_alpha,
                lora_dropout=lora_dropout,
                target_modules=targets,
                modules_to_save=vocabulary_layers,
            )
            lm = get_peft_model(lm, lora)
        self.lm = lm
        self.goal_gate = GoalGate(lm) if pretrained_goal_tokens else None
        width = lm.get_input_embeddings().embedding_dim
        spec = self.env_spec
        self.state_projection: nn.Module = (
            WholeNumberStateEmbedding(spec.state_dim, state_values, width)
            if state_values
            else nn.Linear(spec.state_dim, width)
        )
        self.state_head: nn.Module
        if state_values:
            self.state_head = WholeNumberStateHead(width, spec.state_dim, state_values, copies=copy_values)
        elif state_change_bin_width:
            self.state_head = BinnedChangeHead(width, spec.state_dim, state_change_bin_width, max_state_change)
        else:
            self.state_head = nn.Linear(width, spec.state_dim * (2 if still_tolerance else 1))
        if spec.is_discrete:
            self.action_projection: nn.Module = nn.Embedding(spec.num_actions, width)
            self.action_head = nn.Linear(width, spec.num_actions)
        else:
            self.action_projection = nn.Linear(spec.action_dim, width)
            self.action_head = nn.Linear(width, spec.action_dim)
        self.action_frame = (
            get_action_frame(action_frame, spec.state_dim, spec.num_actions) if action_frame is not None else None
        )
        if self.action_frame is not None:
            self.action_frame_projection = ObjectFrameEncoder(
                self.action_frame.objects, self.action_frame.object_dim, width
            )
        self.state_action_encoder = (
            StateActionEncoder(spec.state_dim, spec.action_dim, spec.num_actions, width) if action_reads_state else None
        )
        self.register_buffer("state_mean", torch.zeros(spec.state_dim))
        self.register_buffer("state_std", torch.ones(spec.state_dim))
        self.register_buffer("change_scale", torch.ones(spec.state_dim))
        self.builder = SequenceBuilder(self.tokenizer, spec.state_dim, spec.is_discrete, spec.action_dim)
        self.strict_loading = False  # LoRA checkpoints leave out the frozen backbone: see on_load_checkpoint

    # ----------------------------------------------------------------------------- statistics

    def setup(self, stage: str) -> None:
        datamodule = self._trainer.datamodule if self._trainer is not None else None
        if stage == "fit" and hasattr(datamodule, "state_statistics"):
            self.use_statistics(datamodule)

    def use_statistics(self, datamodule: Any) -> None:
        """The training rollouts' state mean and spread, and the scale of a regressed change."""
        mean, std = datamodule.state_statistics()
        self.state_mean.copy_(mean)
        self.state_std.copy_(std)
        scale = datamodule.state_change_scale(self.hparams.still_tolerance) if self.standardizes_changes else std
        self.change_scale.copy_(scale)

    @property
    def standardizes_changes(self) -> bool:
        return bool(self.hparams.get("standardize_changes"))  # absent from checkpoints made before the option

    def standardize(self, states: Tensor) -> Tensor:
        return (states - self.state_mean) / self.state_std

    def state_target(self, states: Tensor, reference: Tensor) -> Tensor:
        """What the state head regresses: the standardised state, or its standardised change from ``reference``."""
        if self.hparams.predict_state_change:
            return (states - reference) / self.change_scale
        return self.standardize(states)

    def state_loss(self, hidden: Tensor, states: Tensor, reference: Tensor) -> Tensor:
        """MSE of the regressed target (with ``still_tolerance``: of the changes that happened, plus the
        cross-entropy of moving vs still), or cross-entropy of each dimension's next value or change bin."""
        values = self.hparams.state_values
        if values:
            logits = self.state_head(hidden, reference)
            return F.cross_entropy(logits.reshape(-1, values), states.round().long().clamp(0, values - 1).reshape(-1))
        if self.hparams.state_change_bin_width:
            logits = self.state_head(hidden)
            return F.cross_entropy(logits.flatten(0, -2), self.state_head.target_bins(states - reference).flatten())
        tolerance = self.hparams.still_tolerance
        if not tolerance:
            return F.mse_loss(self.state_head(hidden), self.state_target(states, reference))
        change, moves = self.state_head(hidden).unflatten(-1, (-1, 2)).unbind(-1)
        moved = (states - reference).abs() > tolerance
        squared_error = (change - self.state_target(states, reference)).square()
        change_loss = (squared_error * moved).sum() / moved.sum().clamp_min(1)  # only where a change happened
        return change_loss + F.binary_cross_entropy_with_logits(moves, moved.to(moves.dtype))

    def latest_states(self, batch: dict[str, Tensor]) -> Tensor:
        """For each position, the state of the latest state slot at or before it (the mean before any)."""
        kinds, states = batch["kinds"], batch["states"]
        positions = torch.arange(kinds.shape[1], device=kinds.device).expand_as(kinds)
        latest = torch.where(kinds == STATE, positions, -1).cummax(dim=1).values
        gathered = states.gather(1, latest.clamp_min(0).unsqueeze(-1).expand_as(states))
        return torch.where((latest >= 0).unsqueeze(-1), gathered, self.state_mean)

    # ----------------------------------------------------------------------------- forward

    def embed(self, batch: dict[str, Tensor], latest_states: Tensor | None = None) -> Tensor:
        """Token embeddings with every slot overwritten by its projected state or action (with an action frame
        or ``action_reads_state``, an action slot reads the state of the latest state slot before it: every prompt
        puts an action after its state; ``latest_states``: :meth:`latest_states` of ``batch`` where the caller has
        it already)."""
        tokens = self.lm.get_input_embeddings()(batch["token_ids"])
        kinds = batch["kinds"].unsqueeze(-1)
        raw = batch["states"] if self.hparams.state_values else self.standardize(batch["states"])
        states = self.state_projection(raw).to(tokens.dtype)
        actions = self.action_projection(batch["actions"])
        if self.action_frame is not None or self.state_action_encoder is not None:
            latest = self.latest_states(batch) if latest_states is None else latest_states
        if self.action_frame is not None:
            seen_from_action = self.action_frame.features(latest, batch["actions"])
            actions = actions + self.action_frame_projection(seen_from_action)
        if self.state_action_encoder is not None:
            actions = actions + self.state_action_encoder(self.standardize(latest), batch["actions"])
        actions = actions.to(tokens.dtype)
        return torch.where(kinds == STATE, states, torch.where(kinds == ACTION, actions, tokens))

    def decode(
        self,
        embeddings: Tensor,
        attention_mask: Tensor,
        past_key_values: Any = None,
        use_cache: bool = False,
        goal: Tensor | None = None,
    ) -> Any:
        """The backbone's final hidden states (after its last norm), optionally with a KV cache. ``goal``
        ``(B, T)``: the goal instruction's positions among ``embeddings`` (a batch's ``goal``), where the adapter is
        off with ``pretrained_goal_tokens``."""
        positions = (attention_mask.cumsum(-1) - 1).clamp_min(0)[:, -embeddings.shape[1] :]
        gate = self.goal_gate.off_at(goal) if self.goal_gate is not None else nullcontext()
        with gate:
            return self.lm.get_decoder()(
                inputs_embeds=embeddings,
                attention_mask=attention_mask,
                position_ids=positions,
                past_key_values=past_key_values,
                use_cache=use_cache,
            )

    def losses(self, batch: dict[str, Tensor]) -> dict[str, Tensor]:
        """Per-kind losses of next-position prediction on the supervised positions, for the kinds (``state``,
        ``action``, ``text``) the batch supervises, and their weighted ``total``. A kind the batch does not supervise
        (a batch of one grounding task) is left out, not reported as a loss of 0."""
        latest = self.latest_states(batch)  # the action frame's input and the state head's reference
        embeddings = self.embed(batch, latest)
        hidden = (
            self.decode(embeddings, batch["attention_mask"], goal=batch.get("goal")).last_hidden_state[:, :-1].float()
        )
        target_kinds = batch["kinds"][:, 1:]
        supervised = batch["supervised"][:, 1:] & batch["attention_mask"][:, 1:].bool()
        losses: dict[str, Tensor] = {}
        select = supervised & (target_kinds == STATE)
        if select.any():
            reference = latest[:, :-1][select]
            losses["state"] = self.state_loss(hidden[select], batch["states"][:, 1:][select], reference)
        select = supervised & (target_kinds == ACTION)
        if select.any():
            prediction, target = self.action_head(hidden[select]), batch["actions"][:, 1:][select]
            losses["action"] = (
                F.cross_entropy(prediction, target) if self.env_spec.is_discrete else F.mse_loss(prediction, target)
            )
        select = supervised & (target_kinds == TEXT)
        if select.any():
            logits = self.lm.get_output_embeddings()(hidden[select].to(self.lm.get_output_embeddings().weight.dtype))
            losses["text"] = F.cross_entropy(logits.float(), batch["token_ids"][:, 1:][select])
        h = self.hparams
        weights = {"state": h.state_loss_weight, "action": h.action_loss_weight, "text": h.text_loss_weight}
        losses["total"] = sum((weights[kind] * loss for kind, loss in losses.items()), hidden.new_zeros(()))
        return losses

    def predict_action(
        self, hidden: Tensor, temperature: float = 0.0, generator: torch.Generator | None = None
    ) -> Tensor:
        """Greedy (``temperature`` 0) or sampled discrete actions; continuous actions are the regression output."""
        output = self.action_head(hidden.float())
        if not self.env_spec.is_discrete:
            return output.clamp(-self.env_spec.action_bound, self.env_spec.action_bound)
        if temperature <= 0:
            return output.argmax(-1)
        return torch.multinomial(F.softmax(output / temperature, -1), 1, generator=generator).squeeze(-1)

    def predict_state(self, hidden: Tensor, previous: Tensor) -> Tensor:
        """The next state from the hidden state of the slot before it; ``previous`` is the latest state
        in the sequence (the base of a predicted change). Rounded for envs with whole-number states."""
        if self.hparams.state_values:
            return self.state_head(hidden.float(), previous).argmax(-1).to(previous.dtype)
        if self.hparams.state_change_bin_width:
            return previous + self.state_head.changes(self.state_head(hidden.float())).to(previous.dtype)
        output = self.state_head(hidden.float())
        if self.hparams.still_tolerance:
            change, moves = output.unflatten(-1, (-1, 2)).unbind(-1)
            states = previous + torch.where(moves > 0, change * self.change_scale, torch.zeros_like(change))
        elif self.hparams.predict_state_change:
            states = previous + output * self.change_scale
        else:
            states = output * self.state_std + self.state_mean
        return states.round() if self.hparams.round_states else states

    # ----------------------------------------------------------------------------- training

    def on_before_batch_transfer(self, batch: Any, dataloader_idx: int) -> Any:
        """Examples from :class:`~datamodules.grounding_data.GroundingDataModule` become padded
        token/slot tensors here, on the CPU, because the tokenizer belongs to the backbone."""
        if isinstance(batch, list):
            collated = self.builder.collate([self.builder.build(example) for example in batch])
            collated["task"] = torch.tensor([GROUNDING_TASKS.index(example.task) for example in batch])
            return collated
        return batch

    def training_step(self, batch: dict[str, Tensor], batch_index: int) -> Tensor:
        losses = self.losses(batch)
        self._log_losses("train", losses, batch)
        return losses["total"]

    def validation_step(self, batch: dict[str, Tensor], batch_index: int) -> None:
        """The losses of the batch, then of each grounding task's rows on their own (``val/<task>/loss_<kind>``,
        the kinds that task supervises, as :meth:`losses` reports them): ``val/loss_state`` mixes one-step predictions with consequence prompts,
        whose whole-rollout jumps cost tens of times more and hide how well the model knows the dynamics."""
        self._log_losses("val", self.losses(batch), batch)
        if "task" not in batch:
            return
        for index in batch["task"].unique().tolist():
            rows = batch["task"] == index
            part = {key: value[rows] for key, value in batch.items()}
            self._log_losses(f"val/{GROUNDING_TASKS[index]}", self.losses(part), part)

    def on_validation_epoch_end(self) -> None:
        """Rollout explanation on held-out real rollouts (with ``window_steps``, their last windows):
        exact match (case and full stops aside) and token F1 against each rollout's own instruction."""
        rollouts = (
            getattr(self._trainer.datamodule, "val_rollouts", [])[: self.hparams.explanation_eval_rollouts]
            if self._trainer
            else []
        )
        if not rollouts:
            return
        texts = explain_rollouts(self, [self.explained_part(r.states, r.actions) for r in rollouts])
        exact = sum(normalized(t) == normalized(r.instruction) for t, r in zip(texts, rollouts)) / len(rollouts)
        f1 = sum(token_f1(t, r.instruction) for t, r in zip(texts, rollouts)) / len(rollouts)
        self.log("val/explanation_exact", float(exact))
        self.log("val/explanation_f1", float(f1))

    def explained_part(self, states: Tensor, actions: Tensor) -> tuple[Tensor, Tensor]:
        """What validation explains of a rollout: all of it, or with ``window_steps`` its last window,
        the one that holds the steps reaching the goal (the model was trained to explain windows)."""
        window = self.hparams.window_steps
        return (states, actions) if window is None else (states[-window - 1 :], actions[-window:])

    def _log_losses(self, prefix: str, losses: dict[str, Tensor], batch: dict[str, Tensor]) -> None:
        size = batch["token_ids"].shape[0]
        for name, value in losses.items():
            self.log(
                f"{prefix}/loss_{name}",
                value,
                prog_bar=name == "total" and "/" not in prefix,  # not the per-task losses
                batch_size=size,
                sync_dist=prefix.startswith("val"),
            )

    def configure_optimizers(self) -> Any:
        optimizer = torch.optim.AdamW(self.parameter_groups(), weight_decay=self.hparams.weight_decay)
        warmup = max(1, self.hparams.warmup_steps)
        schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / warmup))
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": schedule, "interval": "step"}}

    def parameter_groups(self) -> list[dict[str, Any]]:
        """The trained backbone weights at ``backbone_lr`` and the rest (slots, frames, heads) at ``lr``; one group
        without ``backbone_lr``, so runs begun before the option resume with their optimizer state."""
        trained = [p for p in self.parameters() if p.requires_grad]
        backbone_lr = self.hparams.get("backbone_lr")  # absent from checkpoints made before the option
        if backbone_lr is None:
            return [{"params": trained, "lr": self.hparams.lr}]
        in_backbone = {id(p) for p in self.lm.parameters()}
        return [
            {"params": [p for p in trained if id(p) in in_backbone], "lr": backbone_lr},
            {"params": [p for p in trained if id(p) not in in_backbone], "lr": self.hparams.lr},
        ]

    # ----------------------------------------------------------------------------- checkpoints

    def _frozen_names(self) -> set[str]:
        """Names of frozen parameters, tied aliases included (SmolLM2's ``lm_head`` is its embedding:
        ``named_parameters`` lists it once, the state dict twice)."""
        return {name for name, p in self.named_parameters(remove_duplicate=False) if not p.requires_grad}

    def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        """A LoRA checkpoint keeps only what trains (adapter, projections, heads) and the statistics;
        the frozen backbone is rebuilt from ``backbone``/``init_seed`` and checked by fingerprint."""
        frozen = self._frozen_names()
        checkpoint["state_dict"] = {k: v for k, v in checkpoint["state_dict"].items() if k not in frozen}
        checkpoint["grounding_base_fingerprint"] = self.base_fingerprint

    def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        saved = checkpoint.get("grounding_base_fingerprint")
        if saved is not None and not torch.allclose(
            torch.tensor(saved), torch.tensor(self.base_fingerprint), rtol=1e-6
        ):
            raise ValueError(
                "grounding checkpoint: the backbone rebuilt from its hyperparameters differs from the one the "
                f"adapter was trained on (fingerprint {saved} vs {self.base_fingerprint}); check the backbone option"
            )
        missing = {name for name, p in self.named_parameters() if p.requires_grad} - set(checkpoint["state_dict"])
        missing |= {"state_mean", "state_std"} - set(checkpoint["state_dict"])
        if "change_scale" not in checkpoint["state_dict"]:
            if self.standardizes_changes:
                missing.add("change_scale")
            checkpoint["state_dict"]["change_scale"] = checkpoint["state_dict"].get("state_std", self.state_std)
        if missing:
            raise ValueError(f"grounding checkpoint: state_dict lacks trained weights {sorted(missing)[:5]}")

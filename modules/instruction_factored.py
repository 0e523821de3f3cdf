"""The first layer of every network that reads ``state ⊕ instruction_embedding``, computed per
distinct instruction.

The instruction embedding is most of a policy input (384 of Meta-World's 475 numbers), and rows of
the same instruction carry bit-identical embeddings. Multiplying the embedding columns of the first
weight matrix once per distinct instruction and gathering the result saves that share of the
layer's forward and weight-gradient products. How much depends on the data: Meta-World's real
data hold 120 instructions, about 102 distinct in a batch of 256, which cuts a TD3+BC update's
operations by 28 % (1.23 → 0.89 GFLOP); BabyAI's hold 5,016, about 239 distinct per batch, so
its layers take the plain product. Written by hand: no library layer deduplicates its input rows.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch.nn import functional

from imaginebench.upstream.torch_functorch import inside_functorch_transform

MIN_ROWS = 32
"""Fewer rows than this take the plain product: finding the distinct ones would cost more than it saves."""
MAX_DISTINCT_SHARE = 0.5
"""More distinct instructions than this share of the rows take the plain product."""
CALLS_WITHOUT_LOOKING = 64
"""After rows that were mostly distinct, this many calls take the plain product without looking for
groups: looking cost a BabyAI layer 0.12 of its 0.52 ms forward (239 distinct instructions in 256
rows), and the data's instruction mix does not change between batches."""


class InstructionFactoredLinear(nn.Linear):
    """``nn.Linear`` whose trailing ``embedding_features`` inputs are an instruction embedding.

    The same function, parameters and state dict as the ``nn.Linear`` it replaces: ``W x + b`` is
    split into ``W_s s + b + W_e e``, and ``W_e e`` is computed for each distinct ``e`` once.
    Rows are grouped by a fixed random projection of ``e``, and the grouping is used only if every
    row equals its group's representative exactly, so the result never depends on a hash collision;
    it differs from the plain product only by the order of float additions.

    The plain product is taken on CUDA (finding distinct rows synchronises the stream for a product
    a GPU does quickly; not measured there); under bfloat16 autocast (its products are 4× cheaper,
    so grouping no longer pays: TD3+BC on Meta-World 10.3 ms per update grouped, 9.6 plain); when
    the embedding requires a gradient (a gathered row would take its whole group's gradient); inside
    ``torch.func`` transforms (TorchRL's losses vmap over critic ensembles unless
    ``deactivate_vmap``); and when rows are few or mostly distinct (then for the next
    :data:`CALLS_WITHOUT_LOOKING` calls too).
    """

    deduplicate = True
    """False (on the class: TorchRL losses hold copies of networks that ``modules()`` does not
    reach): always the plain product, as the tests that compare the two set it."""

    def __init__(
        self, in_features: int, out_features: int, embedding_features: int, bias: bool = True, device=None
    ) -> None:
        super().__init__(in_features, out_features, bias, device=device)
        if not 0 < embedding_features <= in_features:
            raise ValueError(f"embedding_features must lie in (0, {in_features}], got {embedding_features}")
        self.embedding_features = embedding_features
        self.probe = torch.randn(embedding_features, generator=torch.Generator().manual_seed(0))
        """Not a buffer (TorchRL's functional parameters and target updates would carry it); only CPU
        rows are grouped, so it never moves. A local generator leaves the global RNG stream as it was."""
        self.calls_left_without_looking = 0
        """Set to :data:`CALLS_WITHOUT_LOOKING` when the rows were mostly distinct."""

    @classmethod
    def replacing(cls, linear: nn.Linear, embedding_features: int) -> InstructionFactoredLinear:
        """The layer computing what ``linear`` computes, sharing its parameters (and so their initial values)."""
        layer = cls(linear.in_features, linear.out_features, embedding_features, linear.bias is not None, "meta")
        layer.weight = linear.weight  # built on "meta": its own initialisation would draw from the global RNG
        layer.bias = linear.bias
        return layer

    def forward(self, input: Tensor) -> Tensor:
        split = self.in_features - self.embedding_features
        embedding = input[..., split:].reshape(-1, self.embedding_features)
        groups = self._instruction_groups(embedding)
        if groups is None:
            return functional.linear(input, self.weight, self.bias)
        representative, group_of_row = groups
        state = input[..., :split].reshape(-1, split)
        output = _FactoredLinear.apply(
            state, embedding.index_select(0, representative), group_of_row, self.weight, self.bias
        )
        return output.reshape(*input.shape[:-1], self.out_features)

    def _instruction_groups(self, embedding: Tensor) -> tuple[Tensor, Tensor] | None:
        """``(representative row of each group, group of each row)``, or ``None`` for the plain product."""
        rows = embedding.shape[0]
        if (
            not self.deduplicate
            or embedding.is_cuda
            or embedding.requires_grad
            or torch.is_autocast_enabled("cpu")
            or rows < MIN_ROWS
            or inside_functorch_transform()  # vmap cannot batch torch.unique
        ):
            return None
        if self.calls_left_without_looking > 0:
            self.calls_left_without_looking -= 1
            return None
        keys = embedding @ self.probe.to(embedding.dtype)
        distinct, group_of_row = torch.unique(keys, return_inverse=True)
        if distinct.shape[0] > MAX_DISTINCT_SHARE * rows:
            self.calls_left_without_looking = CALLS_WITHOUT_LOOKING
            return None
        representative = torch.empty_like(distinct, dtype=torch.int64).scatter_(
            0, group_of_row, torch.arange(rows, device=embedding.device)
        )
        regathered = embedding.index_select(0, representative).index_select(0, group_of_row)
        if (regathered - embedding).abs_().amax() != 0:  # 4× faster than torch.equal here
            return None  # two instructions share a key: never observed, but exactness does not rest on it
        return representative, group_of_row

    def extra_repr(self) -> str:
        return f"{super().extra_repr()}, embedding_features={self.embedding_features}"


class _FactoredLinear(torch.autograd.Function):
    """``W [s ⊕ e_g] + b`` from the distinct embeddings ``e`` and each row's group ``g``.

    The backward pass writes the weight's gradient in one piece, ``[δᵀ s ⊕ (Σ_g δ)ᵀ e]``: autograd
    through two slices of the weight would allocate and add two zero-filled copies of it, and
    through the gather it would scatter, which together cost as much as the product saved.
    """

    @staticmethod
    def forward(
        ctx, state: Tensor, embedding: Tensor, group_of_row: Tensor, weight: Tensor, bias: Tensor | None
    ) -> Tensor:
        split = state.shape[-1]
        ctx.save_for_backward(state, embedding, group_of_row, weight)
        ctx.has_bias = bias is not None
        projected = functional.linear(embedding, weight[:, split:]).index_select(0, group_of_row)
        return functional.linear(state, weight[:, :split], bias).add_(projected)

    @staticmethod
    def backward(ctx, grad_output: Tensor) -> tuple[Tensor | None, ...]:
        state, embedding, group_of_row, weight = ctx.saved_tensors
        split = state.shape[-1]
        grad_state = grad_output @ weight[:, :split] if ctx.needs_input_grad[0] else None
        grad_weight = None
        if ctx.needs_input_grad[3]:
            group_sums = grad_output.new_zeros(embedding.shape[0], grad_output.shape[-1])
            group_sums.index_add_(0, group_of_row, grad_output)
            grad_weight = torch.cat([grad_output.T @ state, group_sums.T @ embedding], dim=1)
        grad_bias = grad_output.sum(0) if ctx.has_bias and ctx.needs_input_grad[4] else None
        return grad_state, None, None, grad_weight, grad_bias

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.utils._python_dispatch import TorchDispatchMode

import datamodules.mixing
from datamodules.mixing import SOURCE_IMAGINARY, SOURCE_REAL, MixedSampler
from imaginebench.datasets import to_transitions
from tests.synthetic_episodes import synthetic_dataset

REAL = to_transitions(synthetic_dataset("real", (5,) * 60))  # 300 rows
IMAGINARY = to_transitions(synthetic_dataset("imaginary", (5,) * 20))  # 100 rows
BATCH_KEYS = {
    "state",
    "instruction_embedding",
    "action",
    "task_id",
    "source",
    ("next", "state"),
    ("next", "instruction_embedding"),
    ("next", "reward"),
    ("next", "terminated"),
    ("next", "truncated"),
    ("next", "done"),
}


def assert_rows_match_origin(batch) -> None:
    """Each row's ``source`` flag is the buffer it was read from (state[:, 0] says which)."""
    assert batch["source"].dtype == torch.int64
    assert torch.equal(batch["state"][:, 0].long(), batch["source"])


@settings(max_examples=30, deadline=None)
@given(mix_ratio_real=st.floats(0.0, 1.0), batch_size=st.integers(1, 512), seed=st.integers(0, 2**32))
def test_ratio_mode_gives_exact_counts_and_true_source_flags(mix_ratio_real, batch_size, seed):
    batch = MixedSampler(REAL, IMAGINARY, "ratio", mix_ratio_real, seed).sample(batch_size)
    assert batch.batch_size == torch.Size([batch_size])
    assert set(batch.keys(include_nested=True, leaves_only=True)) == BATCH_KEYS
    assert int((batch["source"] == SOURCE_REAL).sum()) == round(mix_ratio_real * batch_size)
    assert_rows_match_origin(batch)
    # one tensor for both, as in each source's rows (networks.observations casts it once)
    assert batch["next", "instruction_embedding"] is batch["instruction_embedding"]


@settings(max_examples=10, deadline=None)
@given(batch_size=st.integers(1, 512))
def test_edge_ratios_need_only_their_own_source(batch_size):
    real_only = MixedSampler(REAL, None, "ratio", 1.0).sample(batch_size)
    imaginary_only = MixedSampler(None, IMAGINARY, "ratio", 0.0).sample(batch_size)
    assert (real_only["source"] == SOURCE_REAL).all() and (real_only["state"][:, 0] == 0).all()
    assert (imaginary_only["source"] == SOURCE_IMAGINARY).all() and (imaginary_only["state"][:, 0] == 1).all()


def test_concat_mode_is_uniform_over_the_union():
    sampler = MixedSampler(REAL, IMAGINARY, "concat", seed=3)
    batch_size, num_batches = 256, 100
    batches = [sampler.sample(batch_size) for _ in range(num_batches)]
    real_counts = torch.tensor([float((b["source"] == SOURCE_REAL).sum()) for b in batches])
    share = len(REAL) / (len(REAL) + len(IMAGINARY))  # 0.75; std of the mean share ≈ 0.003
    assert abs(real_counts.sum().item() / (batch_size * num_batches) - share) < 0.01
    # the split is drawn per batch: binomial variance, not a fixed count
    assert 0.6 < real_counts.var().item() / (batch_size * share * (1 - share)) < 1.5
    for batch in batches:
        assert_rows_match_origin(batch)
    # every real row is reachable (64 draws per row on average)
    rows = torch.cat([b["state"][b["source"] == SOURCE_REAL, 1] for b in batches]).long()
    assert torch.bincount(rows, minlength=len(REAL)).min() > 0


@pytest.mark.parametrize("mix_mode", ["ratio", "concat"])
def test_same_seed_same_batches_other_seed_other_batches(mix_mode):
    def draw(seed):
        sampler = MixedSampler(REAL, IMAGINARY, mix_mode, 0.5, seed)
        return torch.cat([sampler.sample(64) for _ in range(5)])

    assert (draw(7) == draw(7)).all()
    assert not torch.equal(draw(7)["state"], draw(8)["state"])


@settings(max_examples=20, deadline=None)
@given(
    mix_mode=st.sampled_from(["ratio", "concat"]),
    batch_size=st.integers(1, 80),
    prefetch_rows=st.integers(1, 300),
    seed=st.integers(0, 2**32),
)
def test_rows_drawn_ahead_give_the_batches_of_drawing_batch_by_batch(mix_mode, batch_size, prefetch_rows, seed):
    def draw(rows_ahead: int) -> list:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(datamodules.mixing, "PREFETCH_ROWS", rows_ahead)
            sampler = MixedSampler(REAL, IMAGINARY, mix_mode, 0.7, seed)
            batches = [sampler.sample(batch_size) for _ in range(6)]
            sampler.reseed(seed + 1)  # rows drawn ahead under the old seed are not served after a reseed
            return batches + [sampler.sample(batch_size) for _ in range(3)]

    for ahead, one_by_one in zip(draw(prefetch_rows), draw(1), strict=True):
        assert (ahead == one_by_one).all()


def test_reseed_restarts_the_stream():
    sampler = MixedSampler(REAL, IMAGINARY, seed=(0, 1, 2))
    first = sampler.sample(32)
    sampler.sample(32)
    sampler.reseed((0, 1, 2))
    assert (sampler.sample(32) == first).all()


@pytest.mark.parametrize("mix_mode, mix_ratio_real", [("ratio", 0.5), ("ratio", 0.0), ("concat", 0.5)])
def test_missing_imaginary_data_is_a_clear_error(mix_mode, mix_ratio_real):
    with pytest.raises(ValueError, match=rf"mix_mode='{mix_mode}' with mix_ratio_real=.*no imaginary data"):
        MixedSampler(REAL, None, mix_mode, mix_ratio_real)


@pytest.mark.parametrize("mix_mode, mix_ratio_real", [("ratio", 0.5), ("concat", 0.5)])
def test_missing_real_data_is_a_clear_error(mix_mode, mix_ratio_real):
    with pytest.raises(ValueError, match=r"mix_ratio_real=.*no real data"):
        MixedSampler(None, IMAGINARY, mix_mode, mix_ratio_real)


@pytest.mark.parametrize("mix_ratio_real", [-0.01, 1.01, float("nan")])
def test_ratio_outside_unit_interval_is_rejected(mix_ratio_real):
    with pytest.raises(ValueError, match=r"mix_ratio_real must lie in \[0, 1\]"):
        MixedSampler(REAL, IMAGINARY, "ratio", mix_ratio_real)


def test_unknown_mix_mode_is_rejected():
    with pytest.raises(ValueError, match="mix_mode must be"):
        MixedSampler(REAL, IMAGINARY, "shuffle")  # type: ignore[arg-type]


def test_every_row_gives_each_transition_once_with_its_instruction_embedding():
    rows = MixedSampler(REAL, IMAGINARY, "ratio", 0.5).every_row()
    assert set(rows.keys(include_nested=True, leaves_only=True)) == BATCH_KEYS
    assert rows.shape[0] == len(REAL) + len(IMAGINARY)
    assert_rows_match_origin(rows)
    expected = torch.cat([source.instruction_embeddings[source.rows["instruction_id"]] for source in (REAL, IMAGINARY)])
    assert torch.equal(rows["instruction_embedding"], expected)
    assert torch.equal(rows["next", "instruction_embedding"], expected)


class HostToDeviceCopies(TorchDispatchMode):
    """Copies of a CPU tensor onto another device, as they dispatch (``.to``, or a CPU value written into it)."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is torch.ops.aten._to_copy.default:
            self.count += args[0].device.type == "cpu" and torch.device(kwargs.get("device", "cpu")).type != "cpu"
        elif func is torch.ops.aten.copy_.default:
            self.count += args[1].device.type == "cpu" and args[0].device.type != "cpu"
        return func(*args, **kwargs)


@pytest.mark.parametrize("mix_mode", ["ratio", "concat"])
def test_rows_kept_on_a_device_are_gathered_there_and_only_the_drawn_indices_cross(mix_mode, monkeypatch):
    """``meta`` stands for a GPU: a device other than the host's on every machine (its tensors hold no values, so the
    rows' values are the CPU's by the index test of ``test_row_gather_storage.py``)."""
    monkeypatch.setattr(datamodules.mixing, "PREFETCH_ROWS", 256)  # a fresh draw every fourth batch of 64
    on_cpu = MixedSampler(REAL, IMAGINARY, mix_mode, 0.5, seed=5)
    on_device = MixedSampler(REAL, IMAGINARY, mix_mode, 0.5, seed=5, device="meta")
    copies = HostToDeviceCopies()
    with copies:
        batches = [on_device.sample(64) for _ in range(8)]
    expected = [on_cpu.sample(64) for _ in range(8)]
    for batch, reference in zip(batches, expected, strict=True):
        assert set(batch.keys(include_nested=True, leaves_only=True)) == BATCH_KEYS
        for key in BATCH_KEYS:
            assert batch[key].device.type == "meta", key
            assert (batch[key].shape, batch[key].dtype) == (reference[key].shape, reference[key].dtype), key
    # Per source, one index tensor a draw: 2 draws of 4 batches each (ratio), at most 8 draws in concat.
    assert 0 < copies.count <= (4 if mix_mode == "ratio" else 16)

import pytest
import torch
from tensordict import TensorDict
from torchrl.data import LazyTensorStorage

from imaginebench.upstream.torchrl_storage import RowGatherStorage


def rows(count: int) -> TensorDict:
    generator = torch.Generator().manual_seed(0)
    return TensorDict(
        {
            "state": torch.randn(count, 5, generator=generator),
            "action": torch.randint(7, (count,), generator=generator),
            "next": {
                "done": torch.rand(count, 1, generator=generator) < 0.5,
                "image": torch.randn(count, 2, 3, 4, generator=generator),
            },
        },
        batch_size=[count],
    )


def filled(storage_type: type, capacity: int, count: int) -> LazyTensorStorage:
    storage = storage_type(capacity)
    storage.set(torch.arange(count), rows(count))
    return storage


@pytest.mark.parametrize(
    "index", [torch.tensor([3, 0, 3, 9, 1]), torch.tensor([], dtype=torch.int64), torch.tensor([2], dtype=torch.int32)]
)
def test_gathers_the_rows_torchrl_storage_gives(index):
    ours, theirs = filled(RowGatherStorage, 10, 10).get(index), filled(LazyTensorStorage, 10, 10).get(index)
    assert ours.batch_size == theirs.batch_size == torch.Size([len(index)])
    assert (ours == theirs).all()
    assert all(ours[key].dtype == theirs[key].dtype for key in theirs.keys(include_nested=True, leaves_only=True))


@pytest.mark.parametrize(
    "index", [slice(2, 6), 4, torch.tensor([[1, 2], [3, 0]]), torch.tensor([True] * 6 + [False] * 4)]
)
def test_other_indices_and_a_partly_filled_storage_keep_torchrl_behaviour(index):
    assert (filled(RowGatherStorage, 10, 10).get(index) == filled(LazyTensorStorage, 10, 10).get(index)).all()


def test_a_partly_filled_storage_gathers_only_from_its_filled_rows():
    filled_rows = torch.tensor([0, 5, 2])
    assert (filled(RowGatherStorage, 20, 6).get(filled_rows) == filled(LazyTensorStorage, 20, 6).get(filled_rows)).all()
    for storage_type in (RowGatherStorage, LazyTensorStorage):
        with pytest.raises(IndexError):
            filled(storage_type, 20, 6).get(torch.tensor([7]))


def test_sampled_indices_are_drawn_on_the_cpu_wherever_the_rows_are_kept():
    """TorchRL would draw them on the storage's device with the buffer's CPU generator: other rows, or an error."""
    drawn = []
    for device in ("cpu", "meta"):  # meta: a device other than the generator's that every machine has
        storage = RowGatherStorage(10, device=device)
        storage.set(torch.arange(10), rows(10))
        storage._rng = torch.Generator().manual_seed(3)
        drawn.append(storage._rand_given_ndim(6))
    assert drawn[1].device.type == "cpu"
    assert torch.equal(drawn[0], drawn[1])

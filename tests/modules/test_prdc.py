import lightning.pytorch as pl
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from modules.prdc import PRDC, InstructionGroupedIndex
from tests.modules.synthetic import CONTINUOUS, SMALL, InstructionBandit, fit


@settings(max_examples=30, deadline=None)
@given(
    rows=st.integers(1, 60),
    queries=st.integers(1, 8),
    instructions=st.integers(1, 5),
    point_dim=st.integers(1, 6),
    embedding_dim=st.integers(1, 6),
    chunk=st.integers(1, 50),
    seed=st.integers(0, 1000),
)
def test_grouped_index_finds_a_key_as_near_as_the_exact_search(
    rows, queries, instructions, point_dim, embedding_dim, chunk, seed
):
    """Keys ``(x, e)`` with few distinct ``e``, and queries of seen and unseen instructions, against
    the exact distances of the concatenated keys."""
    generator = torch.Generator().manual_seed(seed)
    table = torch.randn(instructions + 1, embedding_dim, generator=generator)  # the last one no key has
    points = torch.randn(rows, point_dim, generator=generator)
    query_points = torch.randn(queries, point_dim, generator=generator)
    embeddings = table[torch.randint(instructions, (rows,), generator=generator)]
    query_embeddings = table[torch.randint(instructions + 1, (queries,), generator=generator)]
    index = InstructionGroupedIndex(chunk_size=chunk)
    index.index(points, embeddings)
    found = index.nearest(query_points, query_embeddings)
    keys, query = torch.cat([points, embeddings], -1), torch.cat([query_points, query_embeddings], -1)
    distances = torch.cdist(query, keys)
    torch.testing.assert_close(distances.gather(-1, found.unsqueeze(-1)).squeeze(-1), distances.min(-1).values)


def test_dataset_constraint_pulls_towards_the_nearest_dataset_action_not_the_batch_action():
    torch.manual_seed(0)
    bandit = InstructionBandit(CONTINUOUS)
    batch = bandit.batch(16)
    module = PRDC(CONTINUOUS, alpha=0.0, **SMALL)  # alpha 0: only the dataset constraint is left
    dataset = batch.clone()
    dataset["action"] = torch.full_like(batch["action"], 0.5)  # the only actions in the indexed data
    module.index_dataset(dataset)
    loss, metrics = module.actor_loss(batch)
    with torch.no_grad():
        policy_action = module.actor(batch.select("state", "instruction_embedding"))["action"]
    torch.testing.assert_close(loss, (policy_action - 0.5).pow(2).mean())
    assert not torch.allclose(loss, (policy_action - batch["action"]).pow(2).mean())


def test_prdc_fits_the_actions_of_nearby_dataset_points():
    pl.seed_everything(0)
    bandit = InstructionBandit(CONTINUOUS)
    module = PRDC(CONTINUOUS, **SMALL)
    module.index_dataset(bandit.batch(2000))
    fit(module, bandit.batch, max_steps=400)
    assert bandit.success_rate(module) > 0.6  # ignoring the instruction's sign gives ≤ 0

"""The push frame: where each ball lies relative to the pushed one, along and across the push."""

from __future__ import annotations

import numpy as np
import torch

from imaginebench.envs.clevr.layout import DIRECTIONS, NUM_BALLS, action_of
from imaginebench.envs.clevr.physics import Table
from imaginebench.envs.clevr.push_frame import BALL_FEATURES, push_frame


def test_offsets_are_measured_along_and_across_the_push_from_the_pushed_ball():
    positions = torch.tensor([[0.0, 0.0], [0.3, 0.0], [0.0, 0.3], [-0.2, -0.1], [0.4, 0.4]])
    right, diagonal = action_of(0, DIRECTIONS.index((1, 0))), action_of(0, DIRECTIONS.index((0.8, 0.8)))
    frame = push_frame(positions.flatten()[None].expand(2, -1), torch.tensor([right, diagonal]))
    assert frame.shape == (2, NUM_BALLS, BALL_FEATURES)
    along, across = frame[..., 0], frame[..., 1]
    torch.testing.assert_close(along[0], torch.tensor([0.0, 0.3, 0.0, -0.2, 0.4]))  # pushed right: along is +x
    torch.testing.assert_close(across[0], torch.tensor([0.0, 0.0, -0.3, 0.1, -0.4]))  # to the push's left is < 0
    torch.testing.assert_close(along[1, 4], torch.tensor(0.4 * 2**0.5))  # straight ahead on the diagonal
    torch.testing.assert_close(across[1, 4], torch.tensor(0.0), atol=1e-6, rtol=0)
    torch.testing.assert_close(frame[0, :, 2:4], positions - positions[0])  # offsets on the table's axes
    torch.testing.assert_close(frame[0, :, 4:6], positions)
    torch.testing.assert_close(frame[0, :, 6:8], positions[0].expand(NUM_BALLS, -1))  # the pushed ball's position
    torch.testing.assert_close(frame[1, :, 8:], torch.tensor([0.5**0.5, 0.5**0.5]).expand(NUM_BALLS, -1))


def test_the_ball_straight_ahead_is_the_one_a_push_moves():
    """What the frame is for: in the simulator a push moves the ball lying ahead of it and no ball beside it."""
    table = Table()
    positions = np.array([[-0.3, 0.2], [-0.05, 0.2], [-0.3, 0.45], [0.4, -0.1], [0.4, 0.5]])
    table.set_positions(positions)
    action = action_of(0, DIRECTIONS.index((1, 0)))
    moved = np.linalg.norm(table.push(action) - positions, axis=-1) > 0.02
    frame = push_frame(torch.as_tensor(positions, dtype=torch.float32).flatten(), torch.tensor(action))
    along, across = frame[:, 0], frame[:, 1]
    in_path = (along > 0) & (across.abs() < 0.2)  # ahead, and closer to the push's line than two radii
    assert moved.tolist() == [True, True, False, False, False]
    assert in_path[1:].tolist() == moved[1:].tolist()

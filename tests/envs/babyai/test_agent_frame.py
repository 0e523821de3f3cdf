"""The agent frame: where each object lies relative to the agent, and the relations BabyAI's rules read."""

from __future__ import annotations

import numpy as np
import torch

from imaginebench.envs.babyai.agent_frame import FRAMED, OBJECT_FEATURES, agent_frame
from imaginebench.envs.babyai.layout import COLOR_TO_IDX, DOOR_LOCKED, DROP, PICKUP, TOGGLE, encode_state
from imaginebench.registry import make
from tests.envs.babyai.worlds import make_world

ON_CELL, NEXT_TO, CARRIED, SAME_COLOR, HOLDING = range(4, 9)
KIND, DOOR, COLOR = slice(9, 13), slice(13, 16), slice(16, 22)


def frame_of(world, action: int) -> torch.Tensor:
    return agent_frame(torch.from_numpy(encode_state(world))[None], torch.tensor([action]))[0]


def test_offsets_and_relations_of_each_object_to_the_agent():
    frame = frame_of(make_world(agent=(1, 3)), PICKUP)  # on the box's cell; the door is in row 3, column 7
    assert frame.shape == (len(FRAMED), OBJECT_FEATURES) and FRAMED == ("ball", "box", "key", "door")
    torch.testing.assert_close(frame[:, :2], torch.tensor([[0.0, -2.0], [0.0, 0.0], [0.0, 2.0], [6.0, 0.0]]))
    assert frame[:, ON_CELL].tolist() == [0, 1, 0, 0] and frame[:, NEXT_TO].tolist() == [0, 0, 0, 0]
    assert frame[:, 2:4].tolist() == [[1, 3]] * 4  # the agent's column and row
    assert frame[:, HOLDING].tolist() == [0, 0, 0, 0]
    torch.testing.assert_close(frame[:, KIND], torch.eye(4))  # the kind of each row
    assert frame[0, -7:].argmax() == PICKUP

    locked = make_world(agent=(6, 3), door_state=DOOR_LOCKED, carrying="key", colors={"key": "purple"})
    frame = frame_of(locked, TOGGLE)
    assert frame[:, CARRIED].tolist() == [0, 0, 1, 0] and frame[:, HOLDING].tolist() == [1, 1, 1, 1]
    assert frame[2, :2].tolist() == [0, 0] and frame[2, ON_CELL] == 0  # a carried key has no cell
    assert frame[3, NEXT_TO] == 1 and frame[:, SAME_COLOR].tolist() == [0, 0, 1, 1]
    assert frame[0, DOOR].argmax() == DOOR_LOCKED
    assert frame[:, COLOR].argmax(-1).tolist() == [COLOR_TO_IDX[c] for c in ("red", "green", "purple", "purple")]


def test_the_frame_tells_when_a_pick_up_drop_or_toggle_changes_the_state():
    """What the frame is for: in the simulator a pick-up takes something exactly when an object lies on the agent's
    cell and the hand is empty, a drop acts exactly when the hand is full and nothing lies on the agent's cell, and a
    toggle acts exactly when the door is next to the agent and, if locked, the agent carries a key of its colour."""
    env, rng = make("BabyAI-v0", "hard"), np.random.default_rng(0)
    seen = {PICKUP: [0, 0], DROP: [0, 0], TOGGLE: [0, 0]}
    for episode in range(60):
        observation, _ = env.reset(seed=episode, options={"task": ("OpenLock", "PutLine")[episode % 2]})
        for _ in range(40):
            action = int(rng.choice([0, 1, 2, 6, PICKUP, TOGGLE, DROP], p=[0.15] * 4 + [0.15, 0.15, 0.1]))
            state = observation["state"]
            observation, *_ = env.step(action)
            changed = not np.array_equal(state, observation["state"])
            frame = agent_frame(torch.from_numpy(state), torch.tensor(action))
            holding = bool(frame[0, HOLDING])
            if action == PICKUP:
                predicted = bool(frame[:3, ON_CELL].any()) and not holding
            elif action == DROP:
                predicted = holding and not bool(frame[:3, ON_CELL].any())
            elif action == TOGGLE:
                door = frame[3]
                unlocks = bool(frame[2, CARRIED] and frame[2, SAME_COLOR])
                predicted = bool(door[NEXT_TO]) and (door[DOOR][DOOR_LOCKED] == 0 or unlocks)
            else:
                continue
            assert changed == predicted, (state, action)
            seen[action][int(changed)] += 1
    assert min(min(counts) for counts in seen.values()) >= 5, seen  # both outcomes of each action were checked

"""The BabyAI env: one minigrid room with a ball, a box, a key and a door, absolute-move actions.

minigrid's ``RoomGrid`` builds the layout and draws frames; ``step`` is our own (the original's
absolute moves, pickup/drop on the agent's own cell, toggle of any adjacent door), so minigrid's
heading-based step semantics play no part.

Reward is sparse, BabyAI's convention: ``1 - 0.9 * t / HORIZON`` on the step that reaches the goal,
0 otherwise. The original benchmark also added a hand-made dense L1 shaping term; it is dropped,
because it encoded one particular solution per task and the offline datasets carry success anyway.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from minigrid.core.mission import MissionSpace
from minigrid.core.roomgrid import RoomGrid
from minigrid.core.world_object import Ball, Box, Door, Key, WorldObj

from imaginebench.envs.babyai.layout import (
    DOOR_CLOSED,
    DOOR_LOCKED,
    DOOR_OPEN,
    DROP,
    MOVES,
    NUM_ACTIONS,
    OBJECTS,
    PICKUP,
    ROOM_SIZE,
    STATE_DIM,
    STATE_FIELDS,
    STATE_HIGH,
    TOGGLE,
    World,
    decode_state,
    encode_state,
    state_violations,
)
from imaginebench.envs.babyai.phrasings import PHRASINGS
from imaginebench.envs.babyai.tasks import LEVEL_TASKS, Goal, instruction_slots, is_success, sample_start
from imaginebench.envs.base import ImagineBenchEnv
from imaginebench.instructions import InstructionTable
from imaginebench.levels import resolve_level

HORIZON = 48
"""Steps per episode, for every task. The original's 128 (minigrid's default for its dummy mission)
let a random walk with absolute moves cover the 6 × 6 room many times over. Even BabyAI's single-room
convention, 64, lets a random policy reach a GoTo target 6+ steps away in ~18 % of episodes (and a
named corner in ~15 %). At 48 every random success rate is <= ~13 % while the expert's longest
episodes (22 steps, PutPile) fit with more than 2x slack."""

_OBJECT_CLASSES: dict[str, type[WorldObj]] = {"ball": Ball, "box": Box, "key": Key}
_HEADING = dict(zip(MOVES, (2, 0, 3, 1)))
"""minigrid ``agent_dir`` after each move (0 east, 1 south, 2 west, 3 north), only used to draw the agent."""


class _Room(RoomGrid):
    """minigrid's two-room grid; ``build`` lays out a sampled :class:`World` (we own the randomness)."""

    def __init__(self, render_mode: str | None):
        super().__init__(
            room_size=ROOM_SIZE,
            num_rows=1,
            num_cols=2,
            max_steps=HORIZON,
            mission_space=MissionSpace(mission_func=lambda: ""),
            render_mode=render_mode,
            highlight=False,
        )
        self.np_random = np.random.default_rng(0)  # only draws door positions that build() overrides
        self._pending: World | None = None
        self.objects: dict[str, WorldObj] = {}
        self.door: Door | None = None

    def build(self, world: World) -> None:
        self._pending = world
        self.reset()
        self.agent_pos = world.agent  # after minigrid's reset, which forbids starting on an object
        if world.carrying is not None:
            self.carrying = self.objects[world.carrying]

    def _gen_grid(self, width: int, height: int) -> None:
        super()._gen_grid(width, height)
        world = self._pending
        assert world is not None
        self.get_room(0, 0).door_pos[0] = world.door
        self.door, _ = self.add_door(
            0, 0, door_idx=0, color=world.colors["door"], locked=world.door_state == DOOR_LOCKED
        )
        self.door.is_open = world.door_state == DOOR_OPEN
        self.objects = {}
        for obj in OBJECTS:
            self.objects[obj] = _OBJECT_CLASSES[obj](world.colors[obj])
            cell = world.positions[obj]
            if cell is not None:
                self.put_obj(self.objects[obj], *cell)
        self.agent_pos, self.agent_dir = (width - 2, 1), 3  # a cell of the empty east room; build() moves it


class BabyAIEnv(ImagineBenchEnv):
    """``BabyAI-v0``: state (17,) + instruction embedding; Discrete(7) absolute-move actions.

    Actions: 0 west, 1 east, 2 north, 6 south (blocked by walls and the door, even an open one;
    the agent may stand on objects); 3 pick up the object on the agent's cell (hands empty);
    4 drop onto the agent's cell (if it holds no object); 5 toggle a 4-adjacent door (a locked
    door opens only for the key of its colour).
    """

    state_rules = staticmethod(state_violations)

    env_id = "BabyAI-v0"
    metadata = {"render_modes": ["rgb_array"], "render_fps": 8}
    state_space = spaces.Box(0.0, STATE_HIGH, (STATE_DIM,), np.float32)
    state_fields = STATE_FIELDS
    action_space = spaces.Discrete(NUM_ACTIONS)
    horizon = HORIZON
    state_determines_simulator = True
    """The 17 numbers name every object's colour and cell, the door's row and state, the agent's
    cell and what it carries: all ``step`` reads (the agent's heading only draws the frame)."""

    def __init__(
        self, level: str, instructions: InstructionTable, task: str | None = None, render_mode: str | None = None
    ):
        level = resolve_level(level)
        super().__init__(level, LEVEL_TASKS[level], instructions, task)
        self.render_mode = render_mode
        self._room = _Room(render_mode=render_mode)
        self.goal: Goal | None = None
        self.step_count = 0

    # ------------------------------------------------------------------ gymnasium API

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """``options``: ``{"task": name}`` picks the task; ``{"world": World, "goal": Goal}`` starts
        from a given state instead of a sampled one (tests, fixed evaluation states)."""
        super().reset(seed=seed)
        options = options or {}
        start = None
        if "world" in options:
            start = (options["world"], options["goal"])
            options = {**options, "task": start[1].task}
        self.task = self._choose_task(options)
        self.instruction = self._start_episode(self.task, start)
        world = self.world()
        return self._observation(encode_state(world)), self._info(is_success(world, self.goal))

    def _start_episode(self, task: str, start: tuple[World, Goal] | None = None) -> str:
        world, self.goal = start if start is not None else sample_start(task, self.np_random)
        self._room.build(world)
        self.step_count = 0
        templates = PHRASINGS[self.level][task]
        template = templates[int(self.np_random.integers(len(templates)))]
        return template.format(**instruction_slots(self.goal, world.colors))

    def step(self, action):
        if self.goal is None:
            raise RuntimeError("BabyAI-v0: call reset() before step()")
        action = int(action)
        if not self.action_space.contains(action):
            raise ValueError(f"BabyAI-v0: action must be in 0..{NUM_ACTIONS - 1}, got {action}")
        self._apply(action)
        self.step_count += 1
        world = self.world()
        success = is_success(world, self.goal)
        reward = self.reward_on_success(self.step_count) if success else 0.0
        truncated = not success and self.step_count >= HORIZON
        return self._observation(encode_state(world)), reward, success, truncated, self._info(success)

    def state(self) -> np.ndarray:
        return encode_state(self.world())

    def set_state(self, state: np.ndarray) -> None:
        """Rebuild the minigrid room from the decoded world (the goal and step count stay)."""
        self._room.build(decode_state(self._settable(state)))

    def goal_flags(self, states: np.ndarray, legal: np.ndarray) -> np.ndarray:
        """BabyAI goals depend on the current state only (no stages), so each row is judged alone;
        an illegal row cannot be decoded into a world and is skipped."""
        assert self.goal is not None, "BabyAI-v0: call reset() before success_flags()"
        goal = self.goal
        return np.array([ok and is_success(decode_state(s), goal) for s, ok in zip(states, legal)], dtype=bool)

    def reward_on_success(self, steps_taken: int) -> float:
        return 1.0 - 0.9 * steps_taken / HORIZON

    def render(self):
        return self._room.get_frame(highlight=False)

    def close(self) -> None:
        self._room.close()

    # ------------------------------------------------------------------ world

    def world(self) -> World:
        """The current world as plain data (what success checks and the expert read)."""
        room = self._room
        door = room.door
        assert door is not None
        state = DOOR_OPEN if door.is_open else DOOR_LOCKED if door.is_locked else DOOR_CLOSED
        carrying = room.carrying.type if room.carrying is not None else None
        positions = {
            obj: None if obj == carrying else tuple(int(v) for v in room.objects[obj].cur_pos) for obj in OBJECTS
        }
        colors = {**{obj: room.objects[obj].color for obj in OBJECTS}, "door": door.color}
        agent = (int(room.agent_pos[0]), int(room.agent_pos[1]))
        return World(colors, positions, int(door.cur_pos[1]), state, agent, carrying)  # type: ignore[arg-type]

    def _apply(self, action: int) -> None:
        room = self._room
        x, y = (int(v) for v in room.agent_pos)
        if action in MOVES:
            dx, dy = MOVES[action]
            room.agent_dir = _HEADING[action]
            target = room.grid.get(x + dx, y + dy)
            if target is None or target.type in OBJECTS:
                room.agent_pos = (x + dx, y + dy)
        elif action == PICKUP:
            here = room.grid.get(x, y)
            if room.carrying is None and here is not None and here.type in OBJECTS:
                room.carrying = here
                here.cur_pos = None
                room.grid.set(x, y, None)
        elif action == DROP:
            if room.carrying is not None and room.grid.get(x, y) is None:
                room.grid.set(x, y, room.carrying)
                room.carrying.cur_pos = (x, y)
                room.carrying = None
        elif action == TOGGLE:
            for dx, dy in MOVES.values():
                door = room.grid.get(x + dx, y + dy)
                if door is not None and door.type == "door":
                    self._toggle(door)

    def _toggle(self, door: Door) -> None:
        carrying = self._room.carrying
        if door.is_locked:
            if carrying is not None and carrying.type == "key" and carrying.color == door.color:
                door.is_locked, door.is_open = False, True
        else:
            door.is_open = not door.is_open

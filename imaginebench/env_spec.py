"""What an algorithm needs to know about an environment to build its networks."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal


@dataclass(frozen=True)
class EnvSpec:
    """Dimensions of the policy input and of the action space.

    Plain data so that it round-trips through checkpoints' hyperparameters and YAML.
    ``num_actions`` is set for discrete actions, ``action_dim`` for continuous ones
    (whose bounds are ``[-action_bound, action_bound]``).
    """

    state_dim: int
    embedding_dim: int
    action_kind: Literal["discrete", "continuous"]
    num_actions: int = 0
    action_dim: int = 0
    action_bound: float = 1.0

    def __post_init__(self) -> None:
        if self.action_kind == "discrete" and self.num_actions < 1:
            raise ValueError("EnvSpec: a discrete action space needs num_actions >= 1")
        if self.action_kind == "continuous" and self.action_dim < 1:
            raise ValueError("EnvSpec: a continuous action space needs action_dim >= 1")

    @property
    def is_discrete(self) -> bool:
        return self.action_kind == "discrete"

    def to_dict(self) -> dict:
        return asdict(self)

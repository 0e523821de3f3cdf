"""The experts' actor network and its checkpoint: actor weights only, plus how they were made.

A checkpoint is what ``collect`` needs to act (a few hundred KB), never the critics or optimizer.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tensordict.nn import NormalParamExtractor
from torch import nn
from torchrl.modules import MLP


def gaussian_policy_net(input_dim: int, action_dim: int, hidden_sizes: Sequence[int]) -> nn.Sequential:
    """``input → (loc, scale)`` of a tanh-squashed Gaussian over actions in [-1, 1]."""
    return nn.Sequential(
        MLP(in_features=input_dim, out_features=2 * action_dim, num_cells=list(hidden_sizes), activation_class=nn.ReLU),
        NormalParamExtractor(),
    )


def save_policy(net: nn.Sequential, path: str | Path, info: dict[str, Any]) -> None:
    """Write the actor's weights and ``info`` (dims, hidden sizes, command, seed, ...) atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {name: tensor.detach().clone() for name, tensor in net.state_dict().items()}
    handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    os.close(handle)
    os.chmod(temporary, 0o644)  # mkstemp makes it private; a shipped checkpoint is for everyone
    torch.save({"state_dict": state, "info": info}, temporary)
    os.replace(temporary, path)


class MeanAction:
    """``(observation, skill) → action``: the mean action ``tanh(loc)`` of a skill-conditioned
    actor network (how experts act)."""

    def __init__(self, net: nn.Sequential, num_skills: int, info: dict[str, Any] | None = None) -> None:
        self.net, self.num_skills, self.info = net, num_skills, info or {}

    def __call__(self, observation: np.ndarray, skill: int = 0) -> np.ndarray:
        one_hot = np.zeros(self.num_skills)
        one_hot[skill] = 1.0
        with torch.no_grad():
            loc, _ = self.net(torch.as_tensor(np.concatenate([observation, one_hot]), dtype=torch.float32))
        return torch.tanh(loc).numpy()


def load_policy(path: str | Path) -> MeanAction:
    """A saved expert; its ``info`` says how it was made."""
    checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    info = checkpoint["info"]
    num_skills = len(info["skills"])
    net = gaussian_policy_net(info["observation_dim"] + num_skills, info["action_dim"], info["hidden_sizes"])
    net.load_state_dict(checkpoint["state_dict"])
    return MeanAction(net.eval(), num_skills, info)

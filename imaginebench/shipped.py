"""The grounded model an env ships, and where the imaginary data imagined from it are found.

``assets/<env_id>/grounding.ckpt`` is a slim grounded checkpoint (:func:`~imaginebench.commands.pipeline.export_grounded_model`);
``assets/<env_id>/imagination.json`` holds the settings its default imaginary data are imagined with,
``{"rollouts": int, "seed": int, "temperature": float}`` and optionally ``"next_states"`` (where each next state is
read, :data:`NextStateSource`; default ``"rollout"``). ``rollouts`` may instead name a count per imagined level,
``{"rephrase": 7000, "easy": 7000, "hard": 700}``: a level whose rollouts often pass the filters gains from more of
them, while one whose rollouts almost never pass need not cost ten times the imagining. Git carries the model, not
the data: a level's imaginary data that neither the data root nor ``assets/`` has are imagined once, on the CPU so
that every checkout gets the same rows, into the data root's default place, where later runs find them.

Looking for data never imports a language model: the commands imagine a missing level
(:func:`imaginebench.commands.imagine.find_or_imagine`) before a DataModule looks here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from imaginebench.assets import assets_dir
from imaginebench.datasets.locations import find_imaginary_dataset, imaginary_candidates
from imaginebench.errors import UserInputError
from imaginebench.levels import IMAGINED_LEVELS, resolve_level

CHECKPOINT_FILE, SETTINGS_FILE = "grounding.ckpt", "imagination.json"

NextStateSource = Literal["rollout", "dynamics"]
"""Where an imagined rollout's next state is read (:func:`~modules.grounding.generation.imagine_rollouts`): at the
action's slot inside the rollout, which follows the goal (KALM), or from the goal-free dynamics-prediction prompt of
the state and action (``(s, a) → s'``)."""
DEFAULT_NEXT_STATES: NextStateSource = "rollout"
"""The read of a shipped model whose ``imagination.json`` names none, and of an env that ships no model."""


@dataclass(frozen=True)
class ShippedModel:
    """A shipped grounded checkpoint and the settings its default imaginary data are imagined with."""

    checkpoint: Path
    rollouts: dict[str, int]
    """Rollouts imagined per level (every one of :data:`~imaginebench.levels.IMAGINED_LEVELS`)."""
    seed: int
    temperature: float
    next_states: NextStateSource = DEFAULT_NEXT_STATES


def read_imagination_settings(path: Path) -> dict[str, dict[str, int] | int | float | str]:
    """``rollouts`` (>= 1, or ``{level: count}`` naming every imagined level; returned per level), ``seed`` (>= 0),
    ``temperature`` (>= 0) and the optional ``next_states`` from ``path``, checked before any data are imagined: a
    typo must fail in one line naming the file and field, not after an hour of generation."""
    if not path.is_file():
        raise FileNotFoundError(
            f'{path}: missing; a shipped {CHECKPOINT_FILE} needs it: {{"rollouts": N, "seed": S, "temperature": T}}'
        )
    try:
        settings = json.loads(path.read_text())
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}: not valid JSON ({error})") from None
    if not isinstance(settings, dict):
        raise ValueError(f"{path}: expected an object with fields 'rollouts', 'seed', 'temperature'")
    checks = {
        "rollouts": (_is_rollout_count, f"an integer >= 1 or one per level of {', '.join(IMAGINED_LEVELS)}"),
        "seed": (lambda v: _is_integer(v) and v >= 0, "an integer >= 0"),
        "temperature": (lambda v: (_is_integer(v) or isinstance(v, float)) and v >= 0, "a number >= 0"),
        "next_states": (lambda v: v in get_args(NextStateSource), f"one of {', '.join(get_args(NextStateSource))}"),
    }
    optional = {"next_states": DEFAULT_NEXT_STATES}
    unknown = sorted(settings.keys() - checks.keys())
    if unknown:
        raise ValueError(f"{path}: field {unknown[0]!r} is unknown (fields: {', '.join(checks)})")
    for field, (valid, meaning) in checks.items():
        if field not in settings and field not in optional:
            raise ValueError(f"{path}: field {field!r} is missing")
        settings.setdefault(field, optional.get(field))
        if not valid(settings[field]):
            raise ValueError(f"{path}: field {field!r} must be {meaning}, got {settings[field]!r}")
    rollouts = settings["rollouts"]
    per_level = rollouts if isinstance(rollouts, dict) else dict.fromkeys(IMAGINED_LEVELS, rollouts)
    return {**settings, "rollouts": per_level, "temperature": float(settings["temperature"])}


def _is_rollout_count(value: object) -> bool:
    counts = value.values() if isinstance(value, dict) and value.keys() == set(IMAGINED_LEVELS) else [value]
    return all(_is_integer(count) and count >= 1 for count in counts)


def _is_integer(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)  # JSON true is no count


def shipped_checkpoint(env_id: str) -> Path:
    return assets_dir() / env_id / CHECKPOINT_FILE


def shipped_model(env_id: str) -> ShippedModel | None:
    """The grounded model ``env_id`` ships (its settings checked), or ``None`` when it ships none."""
    checkpoint = shipped_checkpoint(env_id)
    if not checkpoint.is_file():
        return None
    return ShippedModel(checkpoint, **read_imagination_settings(checkpoint.parent / SETTINGS_FILE))


def imaginary_dataset_dir(env_id: str, level: str, data_dir: str | Path | None = None) -> Path:
    """:func:`find_imaginary_dataset`, raising with the places looked at and the command that makes the data
    (the commands imagine a shipped model's levels on first use, :func:`imaginebench.commands.imagine.find_or_imagine`)."""
    level = resolve_level(level)
    path = find_imaginary_dataset(env_id, level, data_dir)
    if path is None:
        raise UserInputError(missing_imaginary_data(env_id, level, data_dir))
    return path


def missing_imaginary_data(env_id: str, level: str, data_dir: str | Path | None = None) -> str:
    """One line: where a level's imaginary data were looked for, and the commands that make them (with no
    shipped model, ``imaginebench pipeline`` grounds one: the envs whose grounding configs are unmeasured)."""
    own, shipped = imaginary_candidates(env_id, level, data_dir)
    checkpoint = shipped_checkpoint(env_id)
    how = "make it with"
    if not checkpoint.is_file():
        why = f"no shipped model at {checkpoint}"
        how = f"`imaginebench pipeline --env {env_id}` grounds one and imagines every novel level under runs/pipeline/{env_id}/, or {how}"
    elif level in IMAGINED_LEVELS:
        why = f"`imaginebench fit` imagines it from the shipped model {checkpoint} on first use"
    else:
        why = f"the shipped model {checkpoint} imagines only {', '.join(IMAGINED_LEVELS)}"
    return (
        f"no imaginary data of {env_id} level {level!r} at {own} or {shipped} ({why}); {how} "
        f"`imaginebench imagine --checkpoint CKPT --env {env_id} --level {level} --rollouts N --out {own}`"
    )

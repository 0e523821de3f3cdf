"""The four instruction levels of ImagineBench, and the names users may call them by."""

from __future__ import annotations

from imaginebench.errors import UserInputError

LEVELS: tuple[str, ...] = ("train", "rephrase", "easy", "hard")
"""train: seen tasks; rephrase: seen tasks in unseen wording; easy: novel single-step
compositions; hard: novel multi-step compositions."""

IMAGINED_LEVELS: tuple[str, ...] = ("rephrase", "easy", "hard")
"""The levels whose goals have no real data: the grounded model imagines rollouts for them."""

LEVEL_ALIASES: dict[str, str] = {"real": "train"}
"""The original benchmark calls the train level ``real``; both names are accepted."""


def resolve_level(level: str) -> str:
    """Return the canonical level name, or raise naming the valid choices."""
    canonical = LEVEL_ALIASES.get(level, level)
    if canonical not in LEVELS:
        valid = ", ".join([*LEVELS, *LEVEL_ALIASES])
        raise UserInputError(f"unknown level {level!r}; valid levels: {valid}")
    return canonical

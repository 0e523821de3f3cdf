"""Session fixtures shared across test folders."""

from tests.grounding_fixtures import babyai_real, grounded_checkpoint, rollouts  # noqa: F401  (pytest finds fixtures by name)

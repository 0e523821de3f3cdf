"""Session fixtures shared across test folders."""

from tests.data_roots import babyai_data_root  # noqa: F401  (pytest finds fixtures by name)
from tests.grounding_fixtures import babyai_real, grounded_checkpoint, rollouts  # noqa: F401  (pytest finds fixtures by name)
from tests.shipped_fixtures import no_shipped_assets, shipped_tiny_model, tiny_assets  # noqa: F401  (pytest finds fixtures by name)

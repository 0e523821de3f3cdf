"""Lightning: whether a step's ``log(on_step=True)`` is written."""

from __future__ import annotations


def lightning_logs_this_step(trainer) -> bool:
    """Whether ``LightningModule.log(on_step=True)`` is written at this step: Lightning keeps the test
    private (``trainer._logger_connector.should_update_logs``); pinned by ``tests/test_upstream.py``."""
    return trainer._logger_connector.should_update_logs

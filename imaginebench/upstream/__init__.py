"""Workarounds for behaviour of upstream libraries, in one place: one module per library. Each is
pinned by a test that fails when the behaviour it works around changes (``tests/test_upstream.py``;
the silenced warnings: ``tests/test_lightning_cli.py``; TorchRL's storage and soft update:
``tests/datamodules/test_row_gather_storage.py``, ``tests/modules/test_target_updates.py``)."""

"""Learned experts for domains without scripted ones: a TorchRL SAC trainer on any gymnasium env
with Box spaces (``sac.py``), small actor checkpoints (``policy.py``) and the
``imaginebench experts train`` command (``train.py``)."""

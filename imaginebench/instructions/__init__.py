"""Instruction text → embedding, with an on-disk cache."""

from imaginebench.instructions.encoder import DEFAULT_ENCODER, InstructionEncoder
from imaginebench.instructions.table import InstructionTable

__all__ = ["DEFAULT_ENCODER", "InstructionEncoder", "InstructionTable"]

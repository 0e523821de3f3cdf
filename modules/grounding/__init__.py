"""KALM-style grounding of a causal language model in an environment's states and actions."""

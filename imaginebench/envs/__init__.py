"""Benchmark domains. Each subpackage defines one :class:`~imaginebench.envs.domain.Domain`."""

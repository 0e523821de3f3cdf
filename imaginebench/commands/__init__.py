"""The command-line entry points (``imaginebench <command>``): the one place allowed to import every layer
(environments, datasets, DataModules, LightningModules, callbacks), because a command wires them together."""

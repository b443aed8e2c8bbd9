"""The ``theorembench`` command: one module per command group, each command a thin wrapper over a service."""

from theorembench.cli.app import app, main

__all__ = ["app", "main"]

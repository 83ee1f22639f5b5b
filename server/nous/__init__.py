"""Nous: a local context engine for AI chat in editors."""

__version__ = "0.1.0"

"""Workspace awareness: project identity, language/task detection, watching and harvesting."""

"""Recorders and capture scripts of ours that write tests/data (run from the repository root)."""

"""Fuzzy file search: listing trees (walk), scoring paths (score) and the fuzzyFileSearch methods (fuzzy)."""

"""Side-by-side benchmarks of pycodex and Codex 0.169.0 (run ``python -m bench``)."""

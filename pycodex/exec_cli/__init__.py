"""``pycodex exec``: one non-interactive agent run printed as JSONL events or a transcript."""

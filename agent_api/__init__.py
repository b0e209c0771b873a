"""An async library that drives an agent CLI (pycodex or codex) with a bounded event stream."""

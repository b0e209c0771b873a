"""Version-skew compatibility tests: builds of pycodex and Codex run as black-box executables."""

"""The Codex v2 app-server: protocol models, session routing, threads and turns, tools, store."""

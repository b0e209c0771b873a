"""Threads and turns: loaded-thread state, the agent loop, and what the model is sent."""

"""Codex's code mode: the model's tools reached from JavaScript it sends to the ``exec`` tool.

``specs`` builds the ``additional_tools`` input item (which models get it: ``tools.toolset``); ``cells``
runs each script in a ``node`` subprocess; ``handler`` answers ``exec`` and ``wait`` and routes the
script's nested tool calls to the turn's tool router, so approvals and the sandbox apply as for direct
calls.
"""

"""The executor: runs processes and touches files for a harness over the exec-server JSON-RPC wire.

Entry points: ``exec_server.cli.run_exec_server`` / ``add_exec_server_arguments`` and
``python -m exec_server``.
"""

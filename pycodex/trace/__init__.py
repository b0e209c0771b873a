"""Protocol traces: recording (``--trace`` / ``$PYCODEX_TRACE``), and ``pycodex trace show|html|replay``.

The hooks in the transports and clients import only :mod:`pycodex.trace.recorder` (and
:mod:`pycodex.trace.hooks`); the readers are imported by the ``trace`` subcommand alone.
"""

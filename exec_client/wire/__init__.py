"""The exec-server wire, shared by both ends: what the harness (``exec_client``) and the executor
(``exec_server``) and the relay (``relay``) exchange, and nothing that runs either side.

* ``protocol``, ``sandbox_context``, ``uris``, ``errors``: the JSON-RPC method models and error codes;
  ``b64``: base64 for the bulk data they carry (output chunks, file blocks).
* ``noise``: the Noise handshake and record layer; ``relay_frames``: the relay's frame codec.
* ``registry``: the environment registry's HTTP shapes (``register``/``connect``); ``channel``: the
  message-channel interface both ends of a remote stream implement; ``backoff``: the reconnect delays
  both ends use.

The executor and the relay import only this subpackage (tests/pycodex/test_import_graph.py enforces it), so the
harness side of ``exec_client`` can change without touching them.

The output chunk size lives here rather than in ``protocol``: a local process's output pump reads it, and
that should not cost the protocol's pydantic models (~0.1 s of import).
"""

__all__ = ["MAX_CHUNK_BYTES"]

#: Codex sends output in chunks of at most this many raw bytes.
MAX_CHUNK_BYTES = 8192

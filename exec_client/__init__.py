"""The harness side of the exec-server: the async client, execution environments (local and over an
exec-server) and the remote (Noise) connector. The wire both ends share lives in ``exec_client.wire``."""

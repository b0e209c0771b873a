"""``pycodex relay``: a development registry and rendezvous relay (not a production control plane)."""

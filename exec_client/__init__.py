"""The exec-server wire as seen from its clients: protocol models, the async client, execution
environments, the Noise channel and the relay frame codec."""

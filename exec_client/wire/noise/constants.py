"""Wire constants of the Codex ``noise_hybrid_ik_v1`` relay channel (exec_server.md §2, §7, §8).

One home for every name string and limit, so a search for a constant lands here.
"""

from typing import Final

__all__ = [
    "AUTHORIZATION_MAX_BYTES",
    "AUTHORIZATION_REJECTED_MARKER",
    "HANDSHAKE_MSG1_BASE_LEN",
    "HANDSHAKE_MSG2_LEN",
    "JSON_MESSAGE_MAX_BYTES",
    "LENGTH_PREFIX_BYTES",
    "NOISE_MAX_MESSAGE_LEN",
    "PROLOGUE_DOMAIN",
    "PROTOCOL_NAME",
    "PUBLIC_KEY_SUITE",
    "RECORD_PLAINTEXT_MAX",
    "RECORD_TAG_LEN",
    "REORDER_MAX_DISTANCE",
    "REORDER_MAX_PENDING_BYTES",
    "REORDER_MAX_PENDING_RECORDS",
    "SECURITY_PROFILE",
]

#: Value of ``security_profile`` in registry requests and responses.
SECURITY_PROFILE: Final = "noise_hybrid_ik_v1"
#: ``suite`` member of the public-key JSON. Note ``X25519`` here but ``25519`` in the protocol name.
PUBLIC_KEY_SUITE: Final = "Noise_hybridIK_X25519+MLKEM768_AESGCM_SHA256"
#: Hashed into h0 (43 bytes, so it is hashed rather than zero-padded).
PROTOCOL_NAME: Final = b"Noise_hybridIK_25519+MLKEM768_AESGCM_SHA256"
#: First of the four u64-length-prefixed prologue parts.
PROLOGUE_DOMAIN: Final = "codex-exec-server-relay-noise/v1"
#: Payload of handshake message 2 when the registry answered 401 to ``/validate``.
AUTHORIZATION_REJECTED_MARKER: Final = b"codex-registry-authentication-rejected/v1"
#: Largest harness-key authorization the executor forwards to the registry (UTF-8 bytes).
AUTHORIZATION_MAX_BYTES: Final = 4096

#: Largest Noise message (handshake message or transport record ciphertext).
NOISE_MAX_MESSAGE_LEN: Final = 65535
#: AES-GCM tag appended to every encrypted field.
RECORD_TAG_LEN: Final = 16
#: Largest plaintext carried by one transport record (60 KiB).
RECORD_PLAINTEXT_MAX: Final = 60 * 1024
#: Size of the big-endian length prefix in front of each JSON message.
LENGTH_PREFIX_BYTES: Final = 4
#: Largest JSON message inside the record stream (64 MiB).
JSON_MESSAGE_MAX_BYTES: Final = 64 * 1024 * 1024

#: Records may run this far ahead of the next expected ``seq`` before the stream is reset.
REORDER_MAX_DISTANCE: Final = 64
#: At most this many early records are buffered ...
REORDER_MAX_PENDING_RECORDS: Final = 64
#: ... holding at most this many ciphertext bytes.
REORDER_MAX_PENDING_BYTES: Final = 1024 * 1024

#: Handshake message 1 without its payload: skem 1088, e 32+1184, s 48+1200, payload tag 16.
HANDSHAKE_MSG1_BASE_LEN: Final = 3568
#: Handshake message 2 with an empty payload: ekem 1088, skem 1104, e 32+1184, payload tag 16.
HANDSHAKE_MSG2_LEN: Final = 3424

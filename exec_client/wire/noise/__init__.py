"""Sans-IO Noise channel of the Codex remote exec-server relay (``noise_hybrid_ik_v1``).

No sockets, no asyncio, no clock: bytes in, bytes or messages out. Public API:

Keys (:mod:`.keys`)
    ``HybridStaticKey.generate()`` / ``.from_private_bytes(x25519: bytes, mlkem768_seed: bytes)``,
    ``.public_key -> HybridPublicKey``, ``.private_bytes() -> (bytes, bytes)``.
    ``HybridPublicKey(x25519: bytes, mlkem768: bytes)``, ``.to_json() -> dict[str, str]``,
    ``HybridPublicKey.from_json(obj) -> HybridPublicKey`` (strict; raises ``NoiseKeyError``).

Handshake (:mod:`.handshake`)
    ``relay_prologue(environment_id, executor_registration_id, stream_id) -> bytes``.
    ``HandshakeState.initiator(static_key, responder_static, prologue, randomness=None)`` (harness),
    ``HandshakeState.responder(static_key, prologue, randomness=None)`` (executor);
    ``.write_message(payload=b"") -> bytes``, ``.read_message(message) -> bytes``,
    ``.remote_static``, ``.handshake_hash``, ``.is_complete``, ``.rejected``, ``.failed``,
    ``.split() -> TransportCiphers(send, receive)``.
    ``Role.INITIATOR`` / ``Role.RESPONDER``.
    ``HandshakeRandomness`` protocol (``new_x25519``, ``new_mlkem768``, ``encapsulate``),
    ``SystemRandomness``, ``KemEncapsulation(ciphertext, shared_secret)``.

Transport (:mod:`.transport`, :mod:`.framing`)
    ``NoiseTransport(ciphers)`` / ``NoiseTransport.from_handshake(hs)``;
    ``.seal_message(json_bytes) -> list[SealedRecord(seq, ciphertext)]``,
    ``.open_record(seq, ciphertext) -> list[bytes]`` (complete JSON messages, in order).
    Pure helpers: ``frame_message``, ``split_records``, ``MessageReassembler``, ``ReorderBuffer``.

Primitives (:mod:`.symmetric`)
    ``CipherState`` (AES-256-GCM, Noise nonces, sticky errors), ``SymmetricState``, ``hkdf``, ``nonce_bytes``.

Errors (:mod:`.errors`): ``NoiseError`` > ``NoiseUsageError``, ``NoiseKeyError``, ``NoiseLimitError``,
``NoiseProtocolError`` > (``NoiseHandshakeError`` > ``NoiseAuthorizationRejected``), ``NoiseDecryptError``,
``NoiseReorderError``, ``NoiseFramingError``. Constants live in :mod:`.constants`.
"""

from .constants import (
    AUTHORIZATION_REJECTED_MARKER,
    PUBLIC_KEY_SUITE,
    RECORD_PLAINTEXT_MAX,
    SECURITY_PROFILE,
)
from .errors import (
    NoiseAuthorizationRejected,
    NoiseDecryptError,
    NoiseError,
    NoiseFramingError,
    NoiseHandshakeError,
    NoiseKeyError,
    NoiseLimitError,
    NoiseProtocolError,
    NoiseReorderError,
    NoiseUsageError,
)
from .framing import MessageReassembler, ReorderBuffer, frame_message, split_records
from .handshake import HandshakeState, Role, TransportCiphers, relay_prologue
from .keys import HybridPublicKey, HybridStaticKey
from .randomness import HandshakeRandomness, KemEncapsulation, SystemRandomness
from .symmetric import CipherState, SymmetricState, hkdf, nonce_bytes
from .transport import NoiseTransport, SealedRecord

__all__ = [
    "AUTHORIZATION_REJECTED_MARKER",
    "PUBLIC_KEY_SUITE",
    "RECORD_PLAINTEXT_MAX",
    "SECURITY_PROFILE",
    "CipherState",
    "HandshakeRandomness",
    "HandshakeState",
    "HybridPublicKey",
    "HybridStaticKey",
    "KemEncapsulation",
    "MessageReassembler",
    "NoiseAuthorizationRejected",
    "NoiseDecryptError",
    "NoiseError",
    "NoiseFramingError",
    "NoiseHandshakeError",
    "NoiseKeyError",
    "NoiseLimitError",
    "NoiseProtocolError",
    "NoiseReorderError",
    "NoiseTransport",
    "NoiseUsageError",
    "ReorderBuffer",
    "Role",
    "SealedRecord",
    "SymmetricState",
    "SystemRandomness",
    "TransportCiphers",
    "frame_message",
    "hkdf",
    "nonce_bytes",
    "relay_prologue",
    "split_records",
]

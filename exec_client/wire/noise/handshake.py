"""Sans-IO hybrid IK handshake of the Codex exec-server relay (exec_server.md §7).

Owns the two-message pattern with its token order exactly as Codex 0.169.0 (Clatter 2.2.0) runs it::

    <- s                                   (executor static key known in advance)
    -> skem, e, es, s, ss    + authorization payload      harness (initiator) writes
    <- ekem, skem, e, ee, se + b"" or rejection marker    executor (responder) writes

and the split into transport ciphers. It does no I/O: callers move bytes. Registry validation of the
harness key is the responder caller's job, between ``read_message`` and ``write_message``. Any failure
makes the object refuse further use.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from cryptography.hazmat.primitives.asymmetric.mlkem import MLKEM768PrivateKey, MLKEM768PublicKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey

from .constants import (
    AUTHORIZATION_MAX_BYTES,
    AUTHORIZATION_REJECTED_MARKER,
    HANDSHAKE_MSG1_BASE_LEN,
    HANDSHAKE_MSG2_LEN,
    NOISE_MAX_MESSAGE_LEN,
    PROLOGUE_DOMAIN,
    PROTOCOL_NAME,
    RECORD_TAG_LEN,
)
from .errors import (
    NoiseAuthorizationRejected,
    NoiseDecryptError,
    NoiseError,
    NoiseHandshakeError,
    NoiseKeyError,
    NoiseLimitError,
    NoiseUsageError,
)
from .keys import (
    MLKEM768_CIPHERTEXT_LEN,
    MLKEM768_PUBLIC_KEY_LEN,
    X25519_KEY_LEN,
    HybridPublicKey,
    HybridStaticKey,
    mlkem_public_bytes,
    x25519_public_bytes,
)
from .randomness import HandshakeRandomness, SystemRandomness
from .symmetric import CipherState, SymmetricState

__all__ = ["HandshakeState", "Role", "TransportCiphers", "relay_prologue"]


class Role(enum.Enum):
    """Which end of the handshake this object plays."""

    INITIATOR = "initiator"  # the harness (app-server side, JSON-RPC client)
    RESPONDER = "responder"  # the executor (exec-server side, JSON-RPC server)


@dataclass(frozen=True)
class TransportCiphers:
    """The two transport ciphers of one side: ``send`` for outgoing records, ``receive`` for incoming."""

    send: CipherState
    receive: CipherState


def relay_prologue(environment_id: str, executor_registration_id: str, stream_id: str) -> bytes:
    """Prologue bound into h: four UTF-8 parts, each preceded by its length as u64 big-endian.

    The u64 width is what 0.169.0 speaks; a u32 variant in newer sources does not interoperate.
    """
    parts = (PROLOGUE_DOMAIN, environment_id, executor_registration_id, stream_id)
    out = bytearray()
    for part in parts:
        raw = part.encode("utf-8")
        out += len(raw).to_bytes(8, "big") + raw
    return bytes(out)


class _Step(enum.Enum):
    MESSAGE_1 = 1
    MESSAGE_2 = 2
    DONE = 3
    REJECTED = 4
    SPLIT = 5
    FAILED = 6


class _Reader:
    """Cuts fixed-size fields off a handshake message."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._pos = 0

    def take(self, size: int) -> bytes:
        chunk = self._data[self._pos : self._pos + size]
        self._pos += size
        return chunk

    def rest(self) -> bytes:
        return self._data[self._pos :]


class HandshakeState:
    """One side of the hybrid IK handshake.

    Initiator: ``write_message(authorization)`` → bytes, then ``read_message(msg2)`` → ``b""``.
    Responder: ``read_message(msg1)`` → authorization (``remote_static`` now known), then
    ``write_message(b"")`` to accept or ``write_message(AUTHORIZATION_REJECTED_MARKER)`` to reject.
    After a successful exchange, ``split()`` yields the transport ciphers once.

    Raises (from both message methods):
        NoiseUsageError: out of turn, or the object already failed, was rejected or was split.
        NoiseLimitError: the payload to write is too large (the object stays usable).
        NoiseHandshakeError: the peer's message is malformed or fails authentication (sticky).
        NoiseAuthorizationRejected: the initiator read the rejection marker (sticky).
    """

    def __init__(
        self,
        role: Role,
        static_key: HybridStaticKey,
        prologue: bytes,
        remote_static: HybridPublicKey | None = None,
        randomness: HandshakeRandomness | None = None,
    ) -> None:
        if role is Role.INITIATOR and remote_static is None:
            raise NoiseUsageError("the initiator must know the responder's static key (IK pattern)")
        if role is Role.RESPONDER and remote_static is not None:
            raise NoiseUsageError("the responder learns the initiator's static key from message 1")
        self.role = role
        self._static = static_key
        self._remote_static = remote_static
        self._random: HandshakeRandomness = randomness if randomness is not None else SystemRandomness()
        self._step = _Step.MESSAGE_1
        self._failure: str | None = None
        self._e_x25519: X25519PrivateKey | None = None
        self._e_mlkem: MLKEM768PrivateKey | None = None
        self._re_x25519: X25519PublicKey | None = None
        self._re_mlkem: MLKEM768PublicKey | None = None
        self._sym = SymmetricState(PROTOCOL_NAME)
        self._sym.mix_hash(prologue)
        responder_static = remote_static if role is Role.INITIATOR else static_key.public_key
        assert responder_static is not None
        # Pre-message "<- s": the executor's static key, X25519 part first.
        self._sym.mix_hash(responder_static.x25519)
        self._sym.mix_hash(responder_static.mlkem768)

    @classmethod
    def initiator(
        cls,
        static_key: HybridStaticKey,
        responder_static: HybridPublicKey,
        prologue: bytes,
        randomness: HandshakeRandomness | None = None,
    ) -> HandshakeState:
        """The harness side; ``responder_static`` is the executor key from the registry bundle."""
        return cls(Role.INITIATOR, static_key, prologue, responder_static, randomness)

    @classmethod
    def responder(
        cls, static_key: HybridStaticKey, prologue: bytes, randomness: HandshakeRandomness | None = None
    ) -> HandshakeState:
        """The executor side; its ``static_key`` is the one it registered."""
        return cls(Role.RESPONDER, static_key, prologue, None, randomness)

    # -- observers ---------------------------------------------------------------------------------

    @property
    def remote_static(self) -> HybridPublicKey | None:
        """The peer's static key (the responder learns it from message 1)."""
        return self._remote_static

    @property
    def handshake_hash(self) -> bytes:
        """Current handshake hash ``h`` (the channel binding once the handshake is complete)."""
        return self._sym.h

    @property
    def is_complete(self) -> bool:
        """Both messages were exchanged and the handshake was accepted."""
        return self._step in (_Step.DONE, _Step.SPLIT)

    @property
    def rejected(self) -> bool:
        """The responder refused the handshake (message 2 carried the rejection marker)."""
        return self._step is _Step.REJECTED

    @property
    def failed(self) -> bool:
        """The handshake failed; the state may not be used again."""
        return self._step is _Step.FAILED

    # -- driving -----------------------------------------------------------------------------------

    def write_message(self, payload: bytes = b"") -> bytes:
        """Produce the next handshake message carrying ``payload``."""
        initiator = self.role is Role.INITIATOR
        expected = _Step.MESSAGE_1 if initiator else _Step.MESSAGE_2
        self._require_turn(expected, "write")
        if initiator:
            _check_authorization(payload, too_long=NoiseLimitError, not_utf8=NoiseUsageError)
        elif payload not in (b"", AUTHORIZATION_REJECTED_MARKER):
            raise NoiseUsageError("message 2 carries only an empty payload or the rejection marker")
        try:
            if initiator:
                message = self._write_message_1(payload)
                self._step = _Step.MESSAGE_2
            else:
                message = self._write_message_2(payload)
                self._step = _Step.REJECTED if payload else _Step.DONE
        except NoiseError as exc:
            self._fail(str(exc))
            raise
        except ValueError as exc:  # cryptography refuses a DH result or key
            self._fail(str(exc))
            raise NoiseHandshakeError(f"handshake failed while writing: {exc}") from exc
        return message

    def read_message(self, message: bytes) -> bytes:
        """Consume the peer's handshake message and return its decrypted payload."""
        initiator = self.role is Role.INITIATOR
        self._require_turn(_Step.MESSAGE_2 if initiator else _Step.MESSAGE_1, "read")
        try:
            if len(message) > NOISE_MAX_MESSAGE_LEN:
                raise NoiseHandshakeError(f"handshake message of {len(message)} bytes exceeds 65535")
            if initiator:
                payload = self._read_message_2(message)
            else:
                payload = self._read_message_1(message)
                self._step = _Step.MESSAGE_2
        except NoiseDecryptError as exc:
            self._fail(str(exc))
            raise NoiseHandshakeError(f"handshake message failed authentication: {exc}") from exc
        except NoiseError as exc:
            self._fail(str(exc))
            raise
        except ValueError as exc:
            self._fail(str(exc))
            raise NoiseHandshakeError(f"handshake message rejected: {exc}") from exc
        return payload

    def split(self) -> TransportCiphers:
        """Derive the transport ciphers (once). Initiator sends with k1; responder sends with k2."""
        if self._step is not _Step.DONE:
            raise NoiseUsageError(f"cannot split a handshake in state {self._describe()}")
        k1, k2 = self._sym.split()
        self._step = _Step.SPLIT
        if self.role is Role.INITIATOR:
            return TransportCiphers(send=k1, receive=k2)
        return TransportCiphers(send=k2, receive=k1)

    # -- message bodies ----------------------------------------------------------------------------

    def _write_message_1(self, payload: bytes) -> bytes:
        remote = self._remote_static
        assert remote is not None
        out = bytearray()
        out += self._write_skem(remote.mlkem_key())
        out += self._write_e()
        assert self._e_x25519 is not None
        self._sym.mix_key(self._e_x25519.exchange(remote.x25519_key()))  # es
        out += self._sym.encrypt_and_hash(self._static.public_key.x25519)  # s
        out += self._sym.encrypt_and_hash(self._static.public_key.mlkem768)
        self._sym.mix_key(self._static.x25519.exchange(remote.x25519_key()))  # ss
        out += self._sym.encrypt_and_hash(payload)
        return bytes(out)

    def _read_message_1(self, message: bytes) -> bytes:
        if len(message) < HANDSHAKE_MSG1_BASE_LEN:
            raise NoiseHandshakeError(
                f"handshake message 1 is {len(message)} bytes, at least {HANDSHAKE_MSG1_BASE_LEN} expected"
            )
        reader = _Reader(message)
        self._read_skem(reader, self._static.mlkem768)
        self._read_e(reader)
        assert self._re_x25519 is not None
        self._sym.mix_key(self._static.x25519.exchange(self._re_x25519))  # es
        rs_x25519 = self._sym.decrypt_and_hash(reader.take(X25519_KEY_LEN + RECORD_TAG_LEN))  # s
        rs_mlkem = self._sym.decrypt_and_hash(reader.take(MLKEM768_PUBLIC_KEY_LEN + RECORD_TAG_LEN))
        try:
            remote = HybridPublicKey(rs_x25519, rs_mlkem)
            remote.mlkem_key()
        except NoiseKeyError as exc:
            raise NoiseHandshakeError(f"initiator static key is invalid: {exc}") from exc
        self._sym.mix_key(self._static.x25519.exchange(remote.x25519_key()))  # ss
        payload = self._sym.decrypt_and_hash(reader.rest())
        _check_authorization(payload, too_long=NoiseHandshakeError, not_utf8=NoiseHandshakeError)
        self._remote_static = remote
        return payload

    def _write_message_2(self, payload: bytes) -> bytes:
        remote = self._remote_static
        assert remote is not None and self._re_mlkem is not None and self._re_x25519 is not None
        out = bytearray()
        ekem = self._random.encapsulate(self._re_mlkem)  # ekem: clear, MixHash + MixKey
        _check_encapsulation(ekem.ciphertext, ekem.shared_secret)
        out += ekem.ciphertext
        self._sym.mix_hash(ekem.ciphertext)
        self._sym.mix_key(ekem.shared_secret)
        out += self._write_skem(remote.mlkem_key())
        out += self._write_e()
        assert self._e_x25519 is not None
        self._sym.mix_key(self._e_x25519.exchange(self._re_x25519))  # ee
        self._sym.mix_key(self._e_x25519.exchange(remote.x25519_key()))  # se
        out += self._sym.encrypt_and_hash(payload)
        return bytes(out)

    def _read_message_2(self, message: bytes) -> bytes:
        if len(message) < HANDSHAKE_MSG2_LEN:
            raise NoiseHandshakeError(
                f"handshake message 2 is {len(message)} bytes, at least {HANDSHAKE_MSG2_LEN} expected"
            )
        assert self._e_mlkem is not None and self._e_x25519 is not None
        reader = _Reader(message)
        ekem_ct = reader.take(MLKEM768_CIPHERTEXT_LEN)
        self._sym.mix_hash(ekem_ct)
        self._sym.mix_key(self._e_mlkem.decapsulate(ekem_ct))
        self._read_skem(reader, self._static.mlkem768)
        self._read_e(reader)
        assert self._re_x25519 is not None
        self._sym.mix_key(self._e_x25519.exchange(self._re_x25519))  # ee
        self._sym.mix_key(self._static.x25519.exchange(self._re_x25519))  # se
        payload = self._sym.decrypt_and_hash(reader.rest())
        if payload == AUTHORIZATION_REJECTED_MARKER:
            raise NoiseAuthorizationRejected("the executor's registry rejected this harness key")
        if payload:
            raise NoiseHandshakeError(
                f"handshake message 2 carries an unexpected {len(payload)}-byte payload"
            )
        self._step = _Step.DONE
        return payload

    # -- tokens ------------------------------------------------------------------------------------

    def _write_skem(self, remote_kem: MLKEM768PublicKey) -> bytes:
        enc = self._random.encapsulate(remote_kem)
        _check_encapsulation(enc.ciphertext, enc.shared_secret)
        ciphertext = self._sym.encrypt_and_hash(enc.ciphertext)
        self._sym.mix_key_and_hash(enc.shared_secret)
        return ciphertext

    def _read_skem(self, reader: _Reader, own_kem: MLKEM768PrivateKey) -> None:
        field_len = self._sym.encrypted_len(MLKEM768_CIPHERTEXT_LEN)
        kem_ct = self._sym.decrypt_and_hash(reader.take(field_len))
        self._sym.mix_key_and_hash(own_kem.decapsulate(kem_ct))

    def _write_e(self) -> bytes:
        self._e_x25519 = self._random.new_x25519()
        self._e_mlkem = self._random.new_mlkem768()
        e_x = x25519_public_bytes(self._e_x25519)
        e_kem = mlkem_public_bytes(self._e_mlkem)
        self._sym.mix_hash(e_x)
        self._sym.mix_hash(e_kem)
        return e_x + e_kem

    def _read_e(self, reader: _Reader) -> None:
        e_x = reader.take(X25519_KEY_LEN)
        e_kem = reader.take(MLKEM768_PUBLIC_KEY_LEN)
        self._sym.mix_hash(e_x)
        self._sym.mix_hash(e_kem)
        try:
            key = HybridPublicKey(e_x, e_kem)
            self._re_mlkem = key.mlkem_key()
        except NoiseKeyError as exc:
            raise NoiseHandshakeError(f"ephemeral key is invalid: {exc}") from exc
        self._re_x25519 = key.x25519_key()

    # -- state -------------------------------------------------------------------------------------

    def _require_turn(self, expected: _Step, action: str) -> None:
        if self._step is not expected:
            raise NoiseUsageError(f"{self.role.value} cannot {action} a message in state {self._describe()}")

    def _fail(self, reason: str) -> None:
        self._step = _Step.FAILED
        self._failure = reason

    def _describe(self) -> str:
        if self._step is _Step.FAILED:
            return f"failed ({self._failure})"
        return self._step.name.lower()


def _check_authorization(payload: bytes, *, too_long: type[NoiseError], not_utf8: type[NoiseError]) -> None:
    """The harness-key authorization is UTF-8 of at most 4096 bytes (exec_server.md §5.3)."""
    if len(payload) > AUTHORIZATION_MAX_BYTES:
        raise too_long(f"authorization of {len(payload)} bytes exceeds {AUTHORIZATION_MAX_BYTES}")
    try:
        payload.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise not_utf8("authorization payload is not UTF-8") from exc


def _check_encapsulation(ciphertext: bytes, shared_secret: bytes) -> None:
    if len(ciphertext) != MLKEM768_CIPHERTEXT_LEN or len(shared_secret) != 32:
        raise NoiseUsageError("randomness source returned a malformed ML-KEM-768 encapsulation")

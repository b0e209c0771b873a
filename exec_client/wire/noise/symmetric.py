"""Noise symmetric primitives for the AESGCM_SHA256 suite: HKDF, ``CipherState`` and ``SymmetricState``.

Owns exactly what the Noise specification (rev 34, §4–§5) defines for these objects; the hybrid
token processing lives in :mod:`.handshake`. A ``CipherState`` is sticky: once a decryption fails it
refuses every further call, because Noise nonces are implicit and the two sides are now out of step.
"""

from __future__ import annotations

import hashlib
import hmac

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from .constants import NOISE_MAX_MESSAGE_LEN, RECORD_TAG_LEN
from .errors import NoiseDecryptError, NoiseLimitError, NoiseUsageError

__all__ = [
    "HASH_LEN",
    "CipherState",
    "SymmetricState",
    "hkdf",
    "nonce_bytes",
]

HASH_LEN = 32
#: Noise reserves the all-ones nonce; reaching it means the key is exhausted.
_MAX_NONCE = 2**64 - 1


def hkdf(chaining_key: bytes, input_key_material: bytes, outputs: int) -> tuple[bytes, ...]:
    """Noise ``HKDF(ck, ikm, n)`` with HMAC-SHA256: two or three 32-byte outputs."""
    if outputs not in (2, 3):
        raise NoiseUsageError(f"HKDF yields 2 or 3 outputs, not {outputs}")
    temp_key = hmac.digest(chaining_key, input_key_material, "sha256")
    result: list[bytes] = []
    previous = b""
    for index in range(1, outputs + 1):
        previous = hmac.digest(temp_key, previous + bytes([index]), "sha256")
        result.append(previous)
    return tuple(result)


_NONCE_PAD = bytes(4)


def nonce_bytes(counter: int) -> bytes:
    """The AESGCM nonce Noise specifies: 32 zero bits, then the counter as u64 big-endian."""
    return _NONCE_PAD + counter.to_bytes(8, "big")


class CipherState:
    """An AES-256-GCM key with its implicit nonce counter (Noise §5.1).

    Without a key, encrypt/decrypt pass data through unchanged (as Noise specifies for handshake
    fields sent before the first MixKey). Errors are sticky: after a failed decryption or nonce
    exhaustion the object raises ``NoiseUsageError`` on every call.
    """

    def __init__(self, key: bytes | None = None, nonce: int = 0) -> None:
        self._aead: AESGCM | None = None
        self._key: bytes | None = None
        self._failed: str | None = None
        self.nonce = nonce
        if key is not None:
            self.initialize_key(key)

    def initialize_key(self, key: bytes) -> None:
        """Set the AES-256-GCM key and restart the nonce at zero."""
        if len(key) != 32:
            raise NoiseUsageError(f"AES-256-GCM key must be 32 bytes, got {len(key)}")
        self._key = key
        self._aead = AESGCM(key)
        self.nonce = 0

    @property
    def has_key(self) -> bool:
        """A key was set (before that, encryption is the identity, as Noise says)."""
        return self._aead is not None

    @property
    def failed(self) -> bool:
        """The state was poisoned (failed decryption, exhausted nonces, ``fail``); never use it again."""
        return self._failed is not None

    def encrypt_with_ad(self, ad: bytes, plaintext: bytes | memoryview) -> bytes:
        """Encrypt with associated data ``ad`` and the next nonce."""
        self._check_usable()
        if self._aead is None:
            return bytes(plaintext)
        if len(plaintext) + RECORD_TAG_LEN > NOISE_MAX_MESSAGE_LEN:
            raise NoiseLimitError(f"Noise plaintext of {len(plaintext)} bytes exceeds the 65535-byte message")
        ciphertext = self._aead.encrypt(nonce_bytes(self.nonce), plaintext, ad)
        self._advance()
        return ciphertext

    def decrypt_with_ad(self, ad: bytes, ciphertext: bytes | memoryview) -> bytes:
        """Decrypt with associated data ``ad`` and the next nonce; a failure poisons the state."""
        self._check_usable()
        if self._aead is None:
            return bytes(ciphertext)
        if len(ciphertext) < RECORD_TAG_LEN:
            self._failed = "ciphertext shorter than the authentication tag"
            raise NoiseDecryptError(f"ciphertext of {len(ciphertext)} bytes is shorter than the 16-byte tag")
        try:
            plaintext = self._aead.decrypt(nonce_bytes(self.nonce), ciphertext, ad)
        except InvalidTag:
            self._failed = f"decryption failed at nonce {self.nonce}"
            raise NoiseDecryptError(f"AES-GCM authentication failed at nonce {self.nonce}") from None
        self._advance()
        return plaintext

    def fail(self, reason: str) -> None:
        """Poison the object (used by owners whose own checks failed after a successful decrypt)."""
        self._failed = self._failed or reason

    def _advance(self) -> None:
        self.nonce += 1
        if self.nonce >= _MAX_NONCE:
            self._failed = "nonce space exhausted"

    def _check_usable(self) -> None:
        if self._failed is not None:
            raise NoiseUsageError(f"cipher state unusable after earlier failure: {self._failed}")

    def __repr__(self) -> str:
        return f"CipherState(keyed={self.has_key}, nonce={self.nonce}, failed={self.failed})"


class SymmetricState:
    """Noise §5.2 ``SymmetricState`` for SHA-256: chaining key, handshake hash and one ``CipherState``."""

    def __init__(self, protocol_name: bytes) -> None:
        if len(protocol_name) <= HASH_LEN:
            self.h = protocol_name.ljust(HASH_LEN, b"\x00")
        else:
            self.h = hashlib.sha256(protocol_name).digest()
        self.ck = self.h
        self.cipher = CipherState()

    def mix_hash(self, data: bytes) -> None:
        """Noise ``MixHash``: ``h = SHA-256(h || data)``."""
        self.h = hashlib.sha256(self.h + data).digest()

    def mix_key(self, input_key_material: bytes) -> None:
        """Noise ``MixKey``: a new chaining key and cipher key from HKDF."""
        self.ck, temp_k = hkdf(self.ck, input_key_material, 2)
        self.cipher.initialize_key(temp_k[:32])

    def mix_key_and_hash(self, input_key_material: bytes) -> None:
        """Noise ``MixKeyAndHash`` (for the PSK and KEM steps)."""
        self.ck, temp_h, temp_k = hkdf(self.ck, input_key_material, 3)
        self.mix_hash(temp_h)
        self.cipher.initialize_key(temp_k[:32])

    def encrypt_and_hash(self, plaintext: bytes) -> bytes:
        """Noise ``EncryptAndHash``: encrypt with ``h`` as associated data, then mix the ciphertext in."""
        ciphertext = self.cipher.encrypt_with_ad(self.h, plaintext)
        self.mix_hash(ciphertext)
        return ciphertext

    def decrypt_and_hash(self, ciphertext: bytes) -> bytes:
        """Noise ``DecryptAndHash``: decrypt with ``h`` as associated data, then mix the ciphertext in."""
        plaintext = self.cipher.decrypt_with_ad(self.h, ciphertext)
        self.mix_hash(ciphertext)
        return plaintext

    def encrypted_len(self, plaintext_len: int) -> int:
        """Length ``encrypt_and_hash`` would produce now (plaintext when no key is set yet)."""
        return plaintext_len + (RECORD_TAG_LEN if self.cipher.has_key else 0)

    def split(self) -> tuple[CipherState, CipherState]:
        """Two transport ciphers: (initiator→responder, responder→initiator)."""
        temp_k1, temp_k2 = hkdf(self.ck, b"", 2)
        return CipherState(temp_k1[:32]), CipherState(temp_k2[:32])

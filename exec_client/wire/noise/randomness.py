"""Where the handshake gets its fresh key material: ephemeral keys and ML-KEM encapsulations.

pyca/cryptography's ML-KEM ``encapsulate()`` takes no seed, so encapsulation is part of this interface:
tests inject a source that replays recorded ``(ciphertext, shared_secret)`` pairs and get byte-exact
handshakes without patching. Production code uses :class:`SystemRandomness`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from cryptography.hazmat.primitives.asymmetric.mlkem import MLKEM768PrivateKey, MLKEM768PublicKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

__all__ = ["HandshakeRandomness", "KemEncapsulation", "SystemRandomness"]


@dataclass(frozen=True)
class KemEncapsulation:
    """One ML-KEM-768 encapsulation: the 1088-byte ciphertext and the 32-byte shared secret."""

    ciphertext: bytes
    shared_secret: bytes = field(repr=False)


class HandshakeRandomness(Protocol):
    """Source of every random choice a handshake makes."""

    def new_x25519(self) -> X25519PrivateKey:
        """A fresh ephemeral X25519 key."""
        ...

    def new_mlkem768(self) -> MLKEM768PrivateKey:
        """A fresh ephemeral ML-KEM-768 key."""
        ...

    def encapsulate(self, public_key: MLKEM768PublicKey) -> KemEncapsulation:
        """Encapsulate a fresh shared secret to ``public_key``."""
        ...


class SystemRandomness:
    """The operating system's randomness, through pyca/cryptography."""

    def new_x25519(self) -> X25519PrivateKey:
        """A fresh X25519 private key."""
        return X25519PrivateKey.generate()

    def new_mlkem768(self) -> MLKEM768PrivateKey:
        """A fresh ML-KEM-768 private key."""
        return MLKEM768PrivateKey.generate()

    def encapsulate(self, public_key: MLKEM768PublicKey) -> KemEncapsulation:
        """Encapsulate a fresh shared secret to ``public_key``."""
        shared_secret, ciphertext = public_key.encapsulate()
        return KemEncapsulation(ciphertext=ciphertext, shared_secret=shared_secret)

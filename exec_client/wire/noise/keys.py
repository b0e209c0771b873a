"""Hybrid static identities (X25519 + ML-KEM-768) and their public-key JSON (exec_server.md §5.1).

Owns key generation, loading from raw private bytes (for deterministic tests and persisted identities)
and the strict three-field JSON form the registry carries. Private material never appears in ``repr``.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives.asymmetric.mlkem import MLKEM768PrivateKey, MLKEM768PublicKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, PublicFormat

from .constants import PUBLIC_KEY_SUITE
from .errors import NoiseKeyError

__all__ = [
    "MLKEM768_CIPHERTEXT_LEN",
    "MLKEM768_PUBLIC_KEY_LEN",
    "MLKEM768_SEED_LEN",
    "X25519_KEY_LEN",
    "HybridPublicKey",
    "HybridStaticKey",
    "mlkem_public_bytes",
    "x25519_public_bytes",
]

X25519_KEY_LEN = 32
MLKEM768_PUBLIC_KEY_LEN = 1184
MLKEM768_CIPHERTEXT_LEN = 1088
#: ML-KEM private keys serialize only as the 64-byte FIPS 203 seed ``d || z``.
MLKEM768_SEED_LEN = 64

_JSON_FIELDS = ("suite", "x25519_public_key", "mlkem768_public_key")


def x25519_public_bytes(key: X25519PrivateKey | X25519PublicKey) -> bytes:
    """Raw 32-byte public value of an X25519 key (private keys give their public half)."""
    public = key.public_key() if isinstance(key, X25519PrivateKey) else key
    return public.public_bytes(Encoding.Raw, PublicFormat.Raw)


def mlkem_public_bytes(key: MLKEM768PrivateKey | MLKEM768PublicKey) -> bytes:
    """Raw 1184-byte FIPS 203 encapsulation key (private keys give their public half)."""
    public = key.public_key() if isinstance(key, MLKEM768PrivateKey) else key
    return public.public_bytes(Encoding.Raw, PublicFormat.Raw)


@dataclass(frozen=True)
class HybridPublicKey:
    """The public half of a hybrid identity: raw X25519 (32 bytes) and ML-KEM-768 (1184 bytes) keys."""

    x25519: bytes
    mlkem768: bytes

    def __post_init__(self) -> None:
        if len(self.x25519) != X25519_KEY_LEN:
            raise NoiseKeyError(f"x25519 public key must be {X25519_KEY_LEN} bytes, got {len(self.x25519)}")
        if len(self.mlkem768) != MLKEM768_PUBLIC_KEY_LEN:
            raise NoiseKeyError(
                f"ML-KEM-768 public key must be {MLKEM768_PUBLIC_KEY_LEN} bytes, got {len(self.mlkem768)}"
            )

    def __repr__(self) -> str:
        return f"HybridPublicKey(x25519={self.x25519.hex()[:16]}…)"

    def to_json(self) -> dict[str, str]:
        """The registry JSON form, keys in Codex's order, standard base64 with padding."""
        return {
            "suite": PUBLIC_KEY_SUITE,
            "x25519_public_key": base64.b64encode(self.x25519).decode("ascii"),
            "mlkem768_public_key": base64.b64encode(self.mlkem768).decode("ascii"),
        }

    @classmethod
    def from_json(cls, value: object) -> HybridPublicKey:
        """Parse the registry JSON form strictly: exactly three string fields, known suite, exact lengths.

        Raises:
            NoiseKeyError: on any deviation, naming the offending field.
        """
        if not isinstance(value, dict):
            raise NoiseKeyError(f"public key must be a JSON object, got {type(value).__name__}")
        keys = set(value)
        if keys != set(_JSON_FIELDS):
            missing = sorted(set(_JSON_FIELDS) - keys)
            unknown = sorted(str(k) for k in keys - set(_JSON_FIELDS))
            raise NoiseKeyError(f"public key fields wrong: missing {missing}, unknown {unknown}")
        for name in _JSON_FIELDS:
            if not isinstance(value[name], str):
                raise NoiseKeyError(f"public key field {name!r} must be a string")
        if value["suite"] != PUBLIC_KEY_SUITE:
            raise NoiseKeyError(f"unsupported public key suite {value['suite']!r}")
        key = cls(
            x25519=_strict_b64(value["x25519_public_key"], "x25519_public_key"),
            mlkem768=_strict_b64(value["mlkem768_public_key"], "mlkem768_public_key"),
        )
        key.mlkem_key()  # reject encapsulation keys OpenSSL refuses (FIPS 203 modulus check)
        return key

    def x25519_key(self) -> X25519PublicKey:
        """The X25519 half as a ``cryptography`` key."""
        return X25519PublicKey.from_public_bytes(self.x25519)

    def mlkem_key(self) -> MLKEM768PublicKey:
        """The ML-KEM-768 half as a key (``NoiseKeyError`` if the bytes are not a valid key)."""
        try:
            return MLKEM768PublicKey.from_public_bytes(self.mlkem768)
        except (ValueError, UnsupportedAlgorithm) as exc:
            raise NoiseKeyError(f"invalid ML-KEM-768 public key: {exc}") from exc


def _strict_b64(text: str, name: str) -> bytes:
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError) as exc:
        raise NoiseKeyError(f"public key field {name!r} is not standard padded base64") from exc


@dataclass(frozen=True)
class HybridStaticKey:
    """A private hybrid identity. Generated once per process and reused across reconnects."""

    x25519: X25519PrivateKey = field(repr=False)
    mlkem768: MLKEM768PrivateKey = field(repr=False)

    @classmethod
    def generate(cls) -> HybridStaticKey:
        """A fresh static key pair from the system's randomness."""
        return cls(X25519PrivateKey.generate(), MLKEM768PrivateKey.generate())

    @classmethod
    def from_private_bytes(cls, x25519: bytes, mlkem768_seed: bytes) -> HybridStaticKey:
        """Load from a raw 32-byte X25519 private key and a 64-byte ML-KEM seed (``d || z``).

        Raises:
            NoiseKeyError: when either part has the wrong length.
        """
        if len(x25519) != X25519_KEY_LEN:
            raise NoiseKeyError(f"x25519 private key must be {X25519_KEY_LEN} bytes, got {len(x25519)}")
        if len(mlkem768_seed) != MLKEM768_SEED_LEN:
            raise NoiseKeyError(
                f"ML-KEM-768 seed must be {MLKEM768_SEED_LEN} bytes, got {len(mlkem768_seed)}"
            )
        return cls(
            X25519PrivateKey.from_private_bytes(x25519), MLKEM768PrivateKey.from_seed_bytes(mlkem768_seed)
        )

    def private_bytes(self) -> tuple[bytes, bytes]:
        """``(x25519 raw private key, ML-KEM seed)``; inverse of :meth:`from_private_bytes`."""
        raw_x = self.x25519.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
        return raw_x, self.mlkem768.private_bytes_raw()

    @property
    def public_key(self) -> HybridPublicKey:
        """The public halves, as registered with the registry."""
        return HybridPublicKey(x25519_public_bytes(self.x25519), mlkem_public_bytes(self.mlkem768))

    def __repr__(self) -> str:
        return f"HybridStaticKey(public={self.public_key!r})"

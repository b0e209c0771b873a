"""Hybrid IK handshake: Codex 0.169.0 vectors, round trips, tampering, limits, keys and classic primitives."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.mlkem import MLKEM768PrivateKey, MLKEM768PublicKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from exec_client.wire.noise import (
    AUTHORIZATION_REJECTED_MARKER,
    HandshakeState,
    HybridPublicKey,
    HybridStaticKey,
    KemEncapsulation,
    NoiseAuthorizationRejected,
    NoiseHandshakeError,
    NoiseKeyError,
    NoiseLimitError,
    NoiseTransport,
    NoiseUsageError,
    Role,
    SymmetricState,
    SystemRandomness,
    relay_prologue,
)
from exec_client.wire.relay_frames import RelayData, RelayHandshake, RelayResume, decode_frame

VECTORS = json.loads((Path(__file__).parent / "noise_vectors_codex_0169.json").read_text())
from tests.support.paths import TRANSCRIPTS  # noqa: E402

AUTH = b"harness-key-authorization"


def b64(text: str) -> bytes:
    return base64.b64decode(text)


class ScriptedRandomness:
    """Fixed ephemeral keys; encapsulations replayed from a list (cryptography's ML-KEM takes no seed)."""

    def __init__(
        self, x25519: bytes, mlkem_seed: bytes, encapsulations: list[KemEncapsulation] | None
    ) -> None:
        self._x25519 = x25519
        self._mlkem_seed = mlkem_seed
        self._encapsulations: Iterator[KemEncapsulation] | None = (
            iter(encapsulations) if encapsulations is not None else None
        )

    def new_x25519(self) -> X25519PrivateKey:
        return X25519PrivateKey.from_private_bytes(self._x25519)

    def new_mlkem768(self) -> MLKEM768PrivateKey:
        return MLKEM768PrivateKey.from_seed_bytes(self._mlkem_seed)

    def encapsulate(self, public_key: MLKEM768PublicKey) -> KemEncapsulation:
        if self._encapsulations is None:  # real encapsulation, fixed ephemeral keys
            return SystemRandomness().encapsulate(public_key)
        return next(self._encapsulations)


def make_pair(
    stream_id: str = "stream-1",
) -> tuple[HandshakeState, HandshakeState, HybridStaticKey, HybridStaticKey]:
    harness, executor = HybridStaticKey.generate(), HybridStaticKey.generate()
    prologue = relay_prologue("env", "reg", stream_id)
    return (
        HandshakeState.initiator(harness, executor.public_key, prologue),
        HandshakeState.responder(executor, prologue),
        harness,
        executor,
    )


# -- vectors captured against the real Codex binary ----------------------------------------------


def test_harness_side_reproduces_codex_exec_server_vector() -> None:
    v = VECTORS["harness"]
    static = HybridStaticKey.from_private_bytes(
        b64(v["harness_static_x25519"]), b64(v["harness_static_mlkem_seed"])
    )
    skem = KemEncapsulation(b64(v["msg1_skem_ciphertext"]), b64(v["msg1_skem_shared_secret"]))
    randomness = ScriptedRandomness(
        b64(v["harness_ephemeral_x25519"]), b64(v["harness_ephemeral_mlkem_seed"]), [skem]
    )
    prologue = relay_prologue(v["environment_id"], v["executor_registration_id"], v["stream_id"])
    executor_key = HybridPublicKey.from_json(v["executor_public_key"])
    hs = HandshakeState.initiator(static, executor_key, prologue, randomness)

    msg1 = hs.write_message(v["authorization"].encode())
    assert len(msg1) == 3593
    assert hashlib.sha256(msg1).hexdigest() == v["msg1_sha256"]
    msg2_frame = decode_frame(b64(v["msg2_frame_from_codex"]))
    assert msg2_frame.stream_id == v["stream_id"] and isinstance(msg2_frame.body, RelayHandshake)
    assert hs.read_message(msg2_frame.body.payload) == b""
    assert hs.is_complete
    assert hs.handshake_hash.hex() == v["handshake_hash"]

    transport = NoiseTransport.from_handshake(hs)
    [record] = transport.seal_message(v["sent_message"].encode())
    assert (record.seq, record.ciphertext) == (0, b64(v["sent_record_0"]))
    data = decode_frame(b64(v["data_frame_0_from_codex"])).body
    assert isinstance(data, RelayData) and data.seq == 0
    [reply] = transport.open_record(data.seq, data.payload)
    assert reply.startswith(v["received_message_prefix"].encode())
    assert json.loads(reply)["result"]["environmentInfo"]["executorVersion"] == "0.169.0"


def test_executor_side_reproduces_codex_app_server_vector() -> None:
    v = VECTORS["executor"]
    static = HybridStaticKey.from_private_bytes(
        b64(v["executor_static_x25519"]), b64(v["executor_static_mlkem_seed"])
    )
    encapsulations = [
        KemEncapsulation(b64(v["msg2_ekem_ciphertext"]), b64(v["msg2_ekem_shared_secret"])),
        KemEncapsulation(b64(v["msg2_skem_ciphertext"]), b64(v["msg2_skem_shared_secret"])),
    ]
    randomness = ScriptedRandomness(
        b64(v["executor_ephemeral_x25519"]), b64(v["executor_ephemeral_mlkem_seed"]), encapsulations
    )
    prologue = relay_prologue(v["environment_id"], v["executor_registration_id"], v["stream_id"])
    hs = HandshakeState.responder(static, prologue, randomness)

    assert decode_frame(b64(v["resume_frame_from_codex"])).body == RelayResume()
    msg1_frame = decode_frame(b64(v["msg1_frame_from_codex"]))
    assert msg1_frame.stream_id == v["stream_id"] and isinstance(msg1_frame.body, RelayHandshake)
    assert hs.read_message(msg1_frame.body.payload) == v["authorization"].encode()
    assert hs.remote_static == HybridPublicKey.from_json(v["harness_public_key"])
    msg2 = hs.write_message(b"")
    assert len(msg2) == 3424
    assert hashlib.sha256(msg2).hexdigest() == v["msg2_sha256"]
    assert hs.handshake_hash.hex() == v["handshake_hash"]

    transport = NoiseTransport.from_handshake(hs)
    data = decode_frame(b64(v["data_frame_0_from_codex"])).body
    assert isinstance(data, RelayData) and data.seq == 0
    assert transport.open_record(data.seq, data.payload) == [v["received_message"].encode()]


def test_codex_vector_fails_under_a_u32_prologue() -> None:
    v = VECTORS["executor"]
    static = HybridStaticKey.from_private_bytes(
        b64(v["executor_static_x25519"]), b64(v["executor_static_mlkem_seed"])
    )
    parts = [
        "codex-exec-server-relay-noise/v1",
        v["environment_id"],
        v["executor_registration_id"],
        v["stream_id"],
    ]
    u32_prologue = b"".join(len(p).to_bytes(4, "big") + p.encode() for p in parts)
    hs = HandshakeState.responder(static, u32_prologue)
    body = decode_frame(b64(v["msg1_frame_from_codex"])).body
    assert isinstance(body, RelayHandshake)
    with pytest.raises(NoiseHandshakeError):
        hs.read_message(body.payload)


# -- round trips and message shapes --------------------------------------------------------------


@pytest.mark.parametrize("authorization", [b"", AUTH, "ключ-✓".encode(), b"a" * 4096])
def test_handshake_round_trip_agrees_on_hash_and_keys(authorization: bytes) -> None:
    initiator, responder, harness, _ = make_pair()
    msg1 = initiator.write_message(authorization)
    assert len(msg1) == 3568 + len(authorization)
    assert responder.read_message(msg1) == authorization
    assert responder.remote_static == harness.public_key
    msg2 = responder.write_message()
    assert len(msg2) == 3424
    assert initiator.read_message(msg2) == b""
    assert initiator.handshake_hash == responder.handshake_hash
    a, b = initiator.split(), responder.split()
    assert b.receive.decrypt_with_ad(b"", a.send.encrypt_with_ad(b"", b"ping")) == b"ping"
    assert a.receive.decrypt_with_ad(b"", b.send.encrypt_with_ad(b"", b"pong")) == b"pong"


def test_message_fields_sit_at_the_documented_offsets() -> None:
    harness, executor = HybridStaticKey.generate(), HybridStaticKey.generate()
    prologue = relay_prologue("env", "reg", "s")
    real = SystemRandomness()
    skem = real.encapsulate(executor.mlkem768.public_key())
    i_rand = ScriptedRandomness(bytes([7]) * 32, bytes([8]) * 64, [skem])
    r_rand = ScriptedRandomness(bytes([9]) * 32, bytes([10]) * 64, None)
    initiator = HandshakeState.initiator(harness, executor.public_key, prologue, i_rand)
    responder = HandshakeState.responder(executor, prologue, r_rand)
    msg1 = initiator.write_message(AUTH)
    assert msg1[:1088] == skem.ciphertext  # no key yet: skem travels in clear
    assert msg1[1088:1120] == _raw_pub(i_rand.new_x25519())
    assert msg1[1120:2304] == i_rand.new_mlkem768().public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    responder.read_message(msg1)
    msg2 = responder.write_message()
    assert msg2[2192:2224] == _raw_pub(r_rand.new_x25519())
    assert msg2[2224:3408] == r_rand.new_mlkem768().public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    assert initiator.read_message(msg2) == b""


def test_rejection_marker_completes_message_two_but_fails_the_harness() -> None:
    initiator, responder, _, _ = make_pair()
    responder.read_message(initiator.write_message(AUTH))
    msg2 = responder.write_message(AUTHORIZATION_REJECTED_MARKER)
    assert len(msg2) == 3465
    assert responder.rejected
    with pytest.raises(NoiseUsageError):
        responder.split()
    with pytest.raises(NoiseAuthorizationRejected):
        initiator.read_message(msg2)
    assert initiator.failed
    with pytest.raises(NoiseUsageError):
        initiator.split()


def test_relay_prologue_is_four_u64_big_endian_length_prefixed_parts() -> None:
    prologue = relay_prologue("env", "reg-1", "sid")
    domain = b"codex-exec-server-relay-noise/v1"
    assert prologue == (
        len(domain).to_bytes(8, "big") + domain + (3).to_bytes(8, "big") + b"env"
        + (5).to_bytes(8, "big") + b"reg-1" + (3).to_bytes(8, "big") + b"sid"
    )  # fmt: skip


# -- failures ------------------------------------------------------------------------------------


@pytest.mark.parametrize("offset", [0, 1087, 1090, 1500, 2310, 2400, 3560, 3592], ids=lambda o: f"byte{o}")
def test_tampered_message_one_is_rejected_and_responder_stays_failed(offset: int) -> None:
    initiator, responder, _, _ = make_pair()
    msg1 = bytearray(initiator.write_message(AUTH))
    msg1[offset] ^= 0x01
    with pytest.raises(NoiseHandshakeError):
        responder.read_message(bytes(msg1))
    assert responder.failed
    with pytest.raises(NoiseUsageError, match="failed"):
        responder.write_message()
    with pytest.raises(NoiseUsageError):
        responder.read_message(bytes(msg1))


@pytest.mark.parametrize("offset", [0, 1100, 2200, 2300, 3410, 3423], ids=lambda o: f"byte{o}")
def test_tampered_message_two_is_rejected_and_initiator_stays_failed(offset: int) -> None:
    initiator, responder, _, _ = make_pair()
    responder.read_message(initiator.write_message(AUTH))
    msg2 = bytearray(responder.write_message())
    msg2[offset] ^= 0x80
    with pytest.raises(NoiseHandshakeError):
        initiator.read_message(bytes(msg2))
    with pytest.raises(NoiseUsageError):
        initiator.split()


def test_all_zero_ephemeral_x25519_key_is_rejected_and_sticks() -> None:
    initiator, responder, _, _ = make_pair()
    msg1 = bytearray(initiator.write_message(AUTH))
    msg1[1088:1120] = bytes(32)  # low-order point: X25519 refuses the all-zero shared secret
    with pytest.raises(NoiseHandshakeError, match="shared key"):
        responder.read_message(bytes(msg1))
    assert responder.failed


def test_handshake_bound_to_another_stream_id_fails() -> None:
    harness, executor = HybridStaticKey.generate(), HybridStaticKey.generate()
    initiator = HandshakeState.initiator(harness, executor.public_key, relay_prologue("env", "reg", "a"))
    responder = HandshakeState.responder(executor, relay_prologue("env", "reg", "b"))
    with pytest.raises(NoiseHandshakeError, match="authentication"):
        responder.read_message(initiator.write_message(AUTH))


def test_harness_pinning_the_wrong_executor_key_fails() -> None:
    harness, executor, impostor = (HybridStaticKey.generate() for _ in range(3))
    prologue = relay_prologue("env", "reg", "s")
    initiator = HandshakeState.initiator(harness, impostor.public_key, prologue)
    with pytest.raises(NoiseHandshakeError):
        HandshakeState.responder(executor, prologue).read_message(initiator.write_message(AUTH))


@pytest.mark.parametrize("size", [0, 3567, 65536])
def test_message_one_of_impossible_size_is_refused(size: int) -> None:
    _, responder, _, _ = make_pair()
    with pytest.raises(NoiseHandshakeError, match="bytes"):
        responder.read_message(b"\x00" * size)
    assert responder.failed


def test_truncated_message_two_is_refused() -> None:
    initiator, responder, _, _ = make_pair()
    responder.read_message(initiator.write_message(AUTH))
    with pytest.raises(NoiseHandshakeError, match="at least 3424"):
        initiator.read_message(responder.write_message()[:-1])


def test_responder_cannot_send_an_arbitrary_message_two_payload() -> None:
    initiator, responder, _, _ = make_pair()
    responder.read_message(initiator.write_message(AUTH))
    with pytest.raises(NoiseUsageError, match="rejection marker"):
        responder.write_message(b"surprise")
    assert not responder.failed


def test_harness_refuses_an_unexpected_message_two_payload() -> None:
    initiator, responder, _, _ = make_pair()
    responder.read_message(initiator.write_message(AUTH))
    msg2 = responder._write_message_2(b"surprise")  # play a misbehaving executor
    with pytest.raises(NoiseHandshakeError, match="unexpected 8-byte payload"):
        initiator.read_message(msg2)
    assert initiator.failed


def test_oversized_authorization_is_refused_locally_without_poisoning() -> None:
    initiator, _, _, _ = make_pair()
    with pytest.raises(NoiseLimitError, match="4096"):
        initiator.write_message(b"a" * 4097)
    with pytest.raises(NoiseUsageError, match="UTF-8"):
        initiator.write_message(b"\xff")
    assert len(initiator.write_message(AUTH)) == 3593


def test_responder_refuses_oversized_authorization_from_the_peer() -> None:
    harness, executor = HybridStaticKey.generate(), HybridStaticKey.generate()
    prologue = relay_prologue("env", "reg", "s")
    initiator = HandshakeState.initiator(harness, executor.public_key, prologue)
    # Bypass the local check to play a misbehaving harness.
    msg1 = initiator._write_message_1(b"a" * 5000)
    with pytest.raises(NoiseHandshakeError, match="4096"):
        HandshakeState.responder(executor, prologue).read_message(msg1)


def test_calls_out_of_turn_raise_usage_errors() -> None:
    initiator, responder, _, executor = make_pair()
    with pytest.raises(NoiseUsageError):
        initiator.read_message(b"x" * 3424)
    with pytest.raises(NoiseUsageError):
        responder.write_message()
    with pytest.raises(NoiseUsageError):
        initiator.split()
    msg1 = initiator.write_message(AUTH)
    with pytest.raises(NoiseUsageError):
        initiator.write_message(AUTH)
    responder.read_message(msg1)
    initiator.read_message(responder.write_message())
    initiator.split()
    with pytest.raises(NoiseUsageError, match="split"):
        initiator.split()
    with pytest.raises(NoiseUsageError, match="static key"):
        HandshakeState(Role.INITIATOR, executor, b"")
    with pytest.raises(NoiseUsageError):
        HandshakeState(Role.RESPONDER, executor, b"", remote_static=executor.public_key)


# -- keys ----------------------------------------------------------------------------------------


def _transcript_keys() -> list[dict[str, Any]]:
    keys = []
    for name in ("registry_requests.jsonl", "interop_harness.jsonl", "interop_executor.jsonl"):
        path = TRANSCRIPTS / name
        if not path.exists():
            continue
        for line in path.read_text().splitlines():
            body = json.loads(line).get("body") or {}
            for field in ("executor_public_key", "harness_public_key"):
                if isinstance(body, dict) and field in body:
                    keys.append(body[field])
    return keys


def test_public_keys_captured_from_codex_parse_and_reencode_identically() -> None:
    keys = [
        *_transcript_keys(),
        VECTORS["harness"]["executor_public_key"],
        VECTORS["executor"]["harness_public_key"],
    ]
    assert len(keys) >= 2
    for key in keys:
        parsed = HybridPublicKey.from_json(key)
        assert json.dumps(parsed.to_json()) == json.dumps(key)  # same members, same order


def test_static_key_survives_private_bytes_round_trip_and_hides_secrets() -> None:
    key = HybridStaticKey.from_private_bytes(bytes(range(32)), bytes(range(64)))
    assert HybridStaticKey.from_private_bytes(*key.private_bytes()).public_key == key.public_key
    assert key.private_bytes() == (bytes(range(32)), bytes(range(64)))
    assert bytes(range(32)).hex() not in repr(key)
    assert list(key.public_key.to_json()) == ["suite", "x25519_public_key", "mlkem768_public_key"]


def _good_json() -> dict[str, Any]:
    return HybridStaticKey.generate().public_key.to_json()


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda k: k.pop("suite"), "missing"),
        (lambda k: k.update(extra="x"), "unknown"),
        (lambda k: k.update(suite="Noise_IK_25519_AESGCM_SHA256"), "suite"),
        (lambda k: k.update(x25519_public_key="not base64!"), "base64"),
        (lambda k: k.update(x25519_public_key=base64.b64encode(b"\x01" * 31).decode()), "32 bytes"),
        (lambda k: k.update(mlkem768_public_key=k["mlkem768_public_key"].rstrip("=")), "base64"),
        (lambda k: k.update(mlkem768_public_key=base64.b64encode(b"\xff" * 1184).decode()), "ML-KEM"),
        (lambda k: k.update(x25519_public_key=5), "string"),
    ],
    ids=[
        "no-suite",
        "extra-field",
        "wrong-suite",
        "bad-b64",
        "short-x25519",
        "unpadded",
        "bad-mlkem",
        "number",
    ],
)
def test_malformed_public_key_json_is_refused(mutate: Any, message: str) -> None:
    key = _good_json()
    mutate(key)
    with pytest.raises(NoiseKeyError, match=message):
        HybridPublicKey.from_json(key)


def test_public_key_json_must_be_an_object() -> None:
    with pytest.raises(NoiseKeyError, match="object"):
        HybridPublicKey.from_json(["suite"])


# -- classic Noise_IK cross-check against the noiseprotocol package ------------------------------


def _raw_pub(key: X25519PrivateKey) -> bytes:
    return key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


@pytest.mark.parametrize("prologue", [b"", relay_prologue("env", "reg", "stream")], ids=["empty", "relay"])
def test_classic_ik_built_from_our_primitives_matches_noiseprotocol(prologue: bytes) -> None:
    """Drive Noise_IK_25519_AESGCM_SHA256 by hand with our SymmetricState and compare every byte.

    This covers what the hybrid pattern shares with classic Noise: h0 (padded name here), MixHash,
    MixKey/HKDF, EncryptAndHash with AES-GCM and the Noise nonce, Split and transport nonces.
    """
    from noise.connection import Keypair, NoiseConnection

    s_i, e_i, s_r, e_r = (X25519PrivateKey.from_private_bytes(bytes([n]) * 32) for n in (1, 2, 3, 4))
    ref_i = NoiseConnection.from_name(b"Noise_IK_25519_AESGCM_SHA256")
    ref_r = NoiseConnection.from_name(b"Noise_IK_25519_AESGCM_SHA256")
    ref_i.set_as_initiator()
    ref_r.set_as_responder()
    for conn, s, e in ((ref_i, s_i, e_i), (ref_r, s_r, e_r)):
        conn.set_prologue(prologue)
        conn.set_keypair_from_private_bytes(Keypair.STATIC, s.private_bytes_raw())
        conn.set_keypair_from_private_bytes(Keypair.EPHEMERAL, e.private_bytes_raw())
    ref_i.set_keypair_from_public_bytes(Keypair.REMOTE_STATIC, _raw_pub(s_r))
    for conn in (ref_i, ref_r):
        with pytest.warns(UserWarning, match="ephemeral"):  # noiseprotocol's warning about fixed ephemerals
            conn.start_handshake()

    ours = SymmetricState(b"Noise_IK_25519_AESGCM_SHA256")
    ours.mix_hash(prologue)
    ours.mix_hash(_raw_pub(s_r))
    mine = _raw_pub(e_i)  # -> e, es, s, ss
    ours.mix_hash(_raw_pub(e_i))
    ours.mix_key(e_i.exchange(s_r.public_key()))
    mine += ours.encrypt_and_hash(_raw_pub(s_i))
    ours.mix_key(s_i.exchange(s_r.public_key()))
    mine += ours.encrypt_and_hash(b"payload-1")
    msg1 = ref_i.write_message(b"payload-1")
    assert mine == msg1
    assert ref_r.read_message(msg1) == b"payload-1"

    msg2 = ref_r.write_message(b"payload-2")  # <- e, ee, se
    assert msg2[:32] == _raw_pub(e_r)
    ours.mix_hash(_raw_pub(e_r))
    ours.mix_key(e_i.exchange(e_r.public_key()))
    ours.mix_key(s_i.exchange(e_r.public_key()))
    assert ours.decrypt_and_hash(msg2[32:]) == b"payload-2"
    ref_i.read_message(msg2)
    assert ours.h == ref_i.get_handshake_hash()

    send, receive = ours.split()
    for n in range(3):
        assert send.encrypt_with_ad(b"", b"record %d" % n) == ref_i.encrypt(b"record %d" % n)
        assert receive.decrypt_with_ad(b"", ref_r.encrypt(b"reply %d" % n)) == b"reply %d" % n


def test_hybrid_protocol_name_is_hashed_not_padded() -> None:
    name = b"Noise_hybridIK_25519+MLKEM768_AESGCM_SHA256"
    assert len(name) == 43
    assert SymmetricState(name).h == hashlib.sha256(name).digest()
    assert SymmetricState(b"short").h == b"short" + b"\x00" * 27


def test_system_randomness_encapsulation_decapsulates_to_the_same_secret() -> None:
    key = MLKEM768PrivateKey.generate()
    enc = SystemRandomness().encapsulate(key.public_key())
    assert len(enc.ciphertext) == 1088
    assert key.decapsulate(enc.ciphertext) == enc.shared_secret


def test_public_api_names_are_pinned() -> None:
    import exec_client.wire.noise as noise_pkg
    import exec_client.wire.relay_frames as frames

    assert set(noise_pkg.__all__) == {
        "AUTHORIZATION_REJECTED_MARKER", "PUBLIC_KEY_SUITE", "RECORD_PLAINTEXT_MAX", "SECURITY_PROFILE",
        "CipherState", "HandshakeRandomness", "HandshakeState", "HybridPublicKey", "HybridStaticKey",
        "KemEncapsulation", "MessageReassembler", "NoiseAuthorizationRejected", "NoiseDecryptError",
        "NoiseError", "NoiseFramingError", "NoiseHandshakeError", "NoiseKeyError", "NoiseLimitError",
        "NoiseProtocolError", "NoiseReorderError", "NoiseTransport", "NoiseUsageError", "ReorderBuffer",
        "Role", "SealedRecord", "SymmetricState", "SystemRandomness", "TransportCiphers", "frame_message",
        "hkdf", "nonce_bytes", "relay_prologue", "split_records",
    }  # fmt: skip
    assert all(hasattr(noise_pkg, name) for name in noise_pkg.__all__)
    assert set(frames.__all__) == {
        "MAX_RELAY_MESSAGE_BYTES", "RELAY_FRAME_VERSION", "RELAY_RESET_REASON_PROTOCOL_ERROR", "DropReason",
        "RelayAck", "RelayBody", "data_frame_head", "data_frames", "decode_data_frame",
        "RelayData", "RelayFrameDecodeError", "RelayHandshake", "RelayHeartbeat", "RelayMessageFrame",
        "RelayReset", "RelayResume", "decode_frame", "encode_frame", "validate_frame",
    }  # fmt: skip
    assert all(hasattr(frames, name) for name in frames.__all__)

"""Noise transport record layer: framing, splitting, reordering, replay, tampering and limits."""

from __future__ import annotations

import json

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from exec_client.wire.noise import (
    CipherState,
    HandshakeState,
    HybridStaticKey,
    MessageReassembler,
    NoiseDecryptError,
    NoiseFramingError,
    NoiseLimitError,
    NoiseReorderError,
    NoiseTransport,
    NoiseUsageError,
    ReorderBuffer,
    TransportCiphers,
    frame_message,
    nonce_bytes,
    relay_prologue,
    split_records,
)

RECORD_MAX = 61440


def handshake_ciphers() -> tuple[TransportCiphers, TransportCiphers]:
    harness, executor = HybridStaticKey.generate(), HybridStaticKey.generate()
    prologue = relay_prologue("env", "reg", "stream")
    initiator = HandshakeState.initiator(harness, executor.public_key, prologue)
    responder = HandshakeState.responder(executor, prologue)
    responder.read_message(initiator.write_message(b"auth"))
    initiator.read_message(responder.write_message())
    return initiator.split(), responder.split()


@pytest.fixture(params=["harness_sends", "executor_sends"])
def ends(request: pytest.FixtureRequest) -> tuple[NoiseTransport, NoiseTransport]:
    """(sender, receiver) over one fresh handshake, parametrized over which side sends."""
    harness, executor = handshake_ciphers()
    pair = (NoiseTransport(harness), NoiseTransport(executor))
    return pair if request.param == "harness_sends" else (pair[1], pair[0])


def crafted_ends(*, harness_sends: bool = True) -> tuple[CipherState, NoiseTransport]:
    """A raw send cipher (to build arbitrary record plaintexts) and the receiving transport."""
    harness, executor = handshake_ciphers()
    if harness_sends:
        return harness.send, NoiseTransport(executor)
    return executor.send, NoiseTransport(harness)


def msg(n: int, size: int = 0) -> bytes:
    return json.dumps(
        {"id": n, "method": "fs/readFile", "params": {"pad": "x" * size}}, separators=(",", ":")
    ).encode()


def test_small_message_travels_in_one_record_of_plaintext_plus_prefix_plus_tag(
    ends: tuple[NoiseTransport, NoiseTransport],
) -> None:
    sender, receiver = ends
    message = msg(1)
    [record] = sender.seal_message(message)
    assert record.seq == 0
    assert len(record.ciphertext) == len(message) + 4 + 16
    assert receiver.open_record(record.seq, record.ciphertext) == [message]
    assert (sender.next_send_seq, receiver.next_receive_seq) == (1, 1)


def test_sequence_numbers_count_records_per_direction_from_zero(
    ends: tuple[NoiseTransport, NoiseTransport],
) -> None:
    sender, receiver = ends
    seqs = [r.seq for n in range(3) for r in sender.seal_message(msg(n))]
    assert seqs == [0, 1, 2]
    [back] = receiver.seal_message(msg(9))
    assert back.seq == 0


@pytest.mark.parametrize("size", [RECORD_MAX - 4 - 40, 150 * 1024, 3 * RECORD_MAX])
def test_large_message_is_split_into_bounded_records_and_reassembled(
    ends: tuple[NoiseTransport, NoiseTransport], size: int
) -> None:
    sender, receiver = ends
    message = msg(1, size)
    records = sender.seal_message(message)
    assert len(records) == -(-(len(message) + 4) // RECORD_MAX)
    assert all(len(r.ciphertext) <= RECORD_MAX + 16 for r in records)
    out: list[bytes] = []
    for record in records:
        out += receiver.open_record(record.seq, record.ciphertext)
    assert out == [message]


@pytest.mark.parametrize("record_size", [1, 2, 3, 5, 4096])
def test_receiver_accepts_any_split_including_a_split_length_prefix(record_size: int) -> None:
    harness, executor = handshake_ciphers()
    sender = NoiseTransport(harness, record_size=record_size)
    receiver = NoiseTransport(executor)
    messages = [msg(1), msg(2, 100)]
    out: list[bytes] = []
    for message in messages:
        for record in sender.seal_message(message):
            out += receiver.open_record(record.seq, record.ciphertext)
    assert out == messages


def test_one_record_may_complete_several_messages() -> None:
    send, receiver = crafted_ends()
    plaintext = frame_message(msg(1)) + frame_message(msg(2)) + frame_message(msg(3))[:5]
    assert receiver.open_record(0, send.encrypt_with_ad(b"", plaintext)) == [msg(1), msg(2)]
    rest = frame_message(msg(3))[5:]
    assert receiver.open_record(1, send.encrypt_with_ad(b"", rest)) == [msg(3)]


def test_out_of_order_records_within_the_window_are_released_in_order(
    ends: tuple[NoiseTransport, NoiseTransport],
) -> None:
    sender, receiver = ends
    records = [r for n in range(5) for r in sender.seal_message(msg(n))]
    out: list[bytes] = []
    for index in (2, 0, 1, 4, 3):
        out += receiver.open_record(records[index].seq, records[index].ciphertext)
    assert out == [msg(n) for n in range(5)]


def test_duplicate_records_are_ignored(ends: tuple[NoiseTransport, NoiseTransport]) -> None:
    sender, receiver = ends
    first, second, third = (sender.seal_message(msg(n))[0] for n in range(3))
    assert receiver.open_record(0, first.ciphertext) == [msg(0)]
    assert receiver.open_record(0, first.ciphertext) == []  # already released
    assert receiver.open_record(2, third.ciphertext) == []
    assert receiver.open_record(2, b"\x00" * 40) == []  # already pending: the first copy wins
    assert receiver.open_record(1, second.ciphertext) == [msg(1), msg(2)]
    assert receiver.duplicates_ignored == 2
    assert not receiver.failed


def test_replayed_ciphertext_under_a_new_seq_fails_authentication_and_sticks(
    ends: tuple[NoiseTransport, NoiseTransport],
) -> None:
    sender, receiver = ends
    first = sender.seal_message(msg(0))[0]
    receiver.open_record(0, first.ciphertext)
    with pytest.raises(NoiseDecryptError, match="nonce 1"):
        receiver.open_record(1, first.ciphertext)
    assert receiver.failed


@pytest.mark.parametrize("where", [0, 10, -1])
def test_tampered_record_is_rejected_and_the_transport_refuses_further_use(
    ends: tuple[NoiseTransport, NoiseTransport], where: int
) -> None:
    sender, receiver = ends
    good = sender.seal_message(msg(0))[0]
    bad = bytearray(good.ciphertext)
    bad[where] ^= 0x01
    with pytest.raises(NoiseDecryptError):
        receiver.open_record(0, bytes(bad))
    with pytest.raises(NoiseUsageError, match="earlier failure"):
        receiver.open_record(0, good.ciphertext)
    with pytest.raises(NoiseUsageError):
        receiver.seal_message(msg(1))


def test_record_shorter_than_the_tag_is_a_decrypt_error() -> None:
    _, receiver = crafted_ends()
    with pytest.raises(NoiseDecryptError, match="shorter"):
        receiver.open_record(0, b"\x00" * 15)


def test_gap_of_64_is_buffered_but_65_resets(ends: tuple[NoiseTransport, NoiseTransport]) -> None:
    _, receiver = ends
    assert receiver.open_record(64, b"\x00" * 32) == []
    with pytest.raises(NoiseReorderError, match="more than 64 ahead"):
        receiver.open_record(65, b"\x00" * 32)
    assert receiver.failed


def test_pending_bytes_over_one_mebibyte_reset_the_stream() -> None:
    send, receiver = crafted_ends(harness_sends=False)
    records = [send.encrypt_with_ad(b"", b"\x00" * RECORD_MAX) for _ in range(19)]
    for seq in range(1, 18):  # 17 full records pending = 1,044,752 bytes
        receiver.open_record(seq, records[seq])
    with pytest.raises(NoiseReorderError, match="1 MiB"):
        receiver.open_record(18, records[18])


def test_reorder_buffer_caps_pending_records_at_64() -> None:
    buffer = ReorderBuffer()
    for seq in range(1, 65):
        assert buffer.push(seq, b"x") == []
    assert buffer.pending == 64
    released = buffer.push(0, b"first")
    assert len(released) == 65 and released[0] == b"first"
    assert (buffer.next_seq, buffer.pending) == (65, 0)


def test_reorder_buffer_refuses_sequence_numbers_outside_uint32() -> None:
    with pytest.raises(NoiseReorderError, match="uint32"):
        ReorderBuffer().push(2**32, b"x")


def test_oversized_record_is_refused_before_decryption() -> None:
    _, receiver = crafted_ends()
    with pytest.raises(NoiseFramingError, match="61440"):
        receiver.open_record(0, b"\x00" * (RECORD_MAX + 17))


def test_zero_length_message_prefix_is_a_framing_error() -> None:
    send, receiver = crafted_ends()
    with pytest.raises(NoiseFramingError, match="outside 1"):
        receiver.open_record(0, send.encrypt_with_ad(b"", b"\x00\x00\x00\x00{}"))
    assert receiver.failed


def test_reassembler_enforces_record_and_message_limits() -> None:
    with pytest.raises(NoiseFramingError, match="61440"):
        MessageReassembler().push(b"\x00" * (RECORD_MAX + 1))
    exact = MessageReassembler()
    assert exact.push((64 * 1024 * 1024).to_bytes(4, "big") + b"{") == []  # 64 MiB allowed: waits for body
    assert exact.buffered == 5
    with pytest.raises(NoiseFramingError, match="outside 1"):
        MessageReassembler().push((64 * 1024 * 1024 + 1).to_bytes(4, "big"))


def test_sending_empty_or_oversized_messages_is_refused(ends: tuple[NoiseTransport, NoiseTransport]) -> None:
    sender, _ = ends
    with pytest.raises(NoiseUsageError, match="empty"):
        sender.seal_message(b"")
    with pytest.raises(NoiseLimitError, match="67108864"):
        sender.seal_message(b"x" * (64 * 1024 * 1024 + 1))
    assert sender.next_send_seq == 0
    assert not sender.failed


def test_split_records_and_frame_message_shape() -> None:
    framed = frame_message(b"{}")
    assert framed == b"\x00\x00\x00\x02{}"
    assert split_records(b"abcdefg", 3) == [b"abc", b"def", b"g"]
    with pytest.raises(NoiseUsageError):
        split_records(b"x", RECORD_MAX + 1)


def test_cipher_state_uses_noise_nonce_encoding_and_counts() -> None:
    key = bytes(range(32))
    cipher = CipherState(key)
    reference = AESGCM(key)
    for n in range(3):
        assert cipher.encrypt_with_ad(b"ad", b"data") == reference.encrypt(
            b"\x00" * 4 + n.to_bytes(8, "big"), b"data", b"ad"
        )
    assert nonce_bytes(258) == bytes(4) + b"\x00\x00\x00\x00\x00\x00\x01\x02"
    assert cipher.nonce == 3


def test_cipher_state_is_sticky_after_a_failed_decrypt() -> None:
    cipher = CipherState(bytes(32))
    with pytest.raises(NoiseDecryptError):
        cipher.decrypt_with_ad(b"", b"\x00" * 20)
    with pytest.raises(NoiseUsageError):
        cipher.encrypt_with_ad(b"", b"x")
    with pytest.raises(NoiseUsageError):
        cipher.decrypt_with_ad(b"", b"\x00" * 20)


def test_cipher_state_refuses_plaintext_beyond_the_noise_message_limit() -> None:
    with pytest.raises(NoiseLimitError, match="65535"):
        CipherState(bytes(32)).encrypt_with_ad(b"", b"\x00" * 65520)

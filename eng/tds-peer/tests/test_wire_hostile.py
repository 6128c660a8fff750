"""Numbers a hostile or broken client puts on the wire that do not fit where the peer keeps them
(issue 36): each ends in a TDS error or a closed connection, never in a wrapped value used as a
handle or length. The parsers' own unit tests (src/rpc.rs, src/io.rs) cover the rest."""

import rawtds

HEADERS = ((22).to_bytes(4, "little") + (18).to_bytes(4, "little") + (2).to_bytes(2, "little")
           + bytes(8) + (1).to_bytes(4, "little"))


def nvarchar(text: str) -> bytes:
    v = text.encode("utf-16-le")
    return (b"\x00\x00" + b"\xe7" + (8000).to_bytes(2, "little") + bytes([0x09, 0x04, 0xD0, 0x00, 0x34])
            + len(v).to_bytes(2, "little") + v)


def rpc(proc_id: int, params: bytes) -> bytes:
    return HEADERS + b"\xff\xff" + proc_id.to_bytes(2, "little") + b"\x00\x00" + params


def bigint(value: int, output: bool = False) -> bytes:
    """An unnamed INTN(8) parameter."""
    return b"\x00" + bytes([1 if output else 0]) + b"\x26\x08\x08" + value.to_bytes(8, "little", signed=True)


def test_execute_handle_past_int_is_not_found_not_wrapped(peer):
    """sp_execute with handle 2^32 + 1 used to run prepared statement 1 (`as i32` wrapped it);
    SQL Server answers 8179, and sp_unprepare of it frees nothing."""
    with rawtds.connect(peer.port) as s:
        prepare = b"\x00\x01\x26\x04\x00" + nvarchar("") + nvarchar("SELECT 42")  # @handle OUTPUT int NULL
        s.sendall(rawtds.packet(0x03, rpc(11, prepare)))
        assert rawtds.errors(rawtds.message(s)) == []
        wrapped = (1 << 32) + 1
        s.sendall(rawtds.packet(0x03, rpc(15, bigint(wrapped))))  # sp_unprepare: frees nothing
        rawtds.message(s)
        s.sendall(rawtds.packet(0x03, rpc(12, bigint(wrapped))))
        assert [(n, c) for n, c, _, _ in rawtds.errors(rawtds.message(s))] == [(8179, 16)]
        # Handle 1 is still prepared and runs.
        s.sendall(rawtds.packet(0x03, rpc(12, bigint(1))))
        reply = rawtds.message(s)
        assert 0x81 in reply and 0xAA not in reply[:1]  # COLMETADATA, no leading ERROR

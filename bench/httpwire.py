"""HTTP/1.1 response framing and percentiles shared by the bench load drivers (loadgen.py,
authload.py): stdlib only, imported from the scripts' own directory."""


class ParseError(Exception):
    pass


def take_response(buf):
    """(consumed, status, close, body) for one complete response at the head of buf, or None
    when more bytes are needed. Content-Length and chunked framing (RFC 9112 section 6)."""
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        if len(buf) > 65536:
            raise ParseError("header block too large")
        return None
    head = bytes(buf[:end]).lower()
    if not head.startswith(b"http/1."):
        raise ParseError("not an HTTP/1.x response")
    try:
        status = int(head[9:12])
    except ValueError:
        raise ParseError("bad status line")
    close = b"\r\nconnection: close" in head or head.startswith(b"http/1.0")
    start = end + 4
    i = head.find(b"\r\ncontent-length:")
    if i >= 0:
        j = head.find(b"\r\n", i + 2)
        total = start + int(head[i + 17:j if j >= 0 else len(head)].strip())
        return (total, status, close, buf[start:total]) if len(buf) >= total else None
    if b"\r\ntransfer-encoding:" in head and b"chunked" in head:
        pos, body = start, bytearray()
        while True:
            line_end = buf.find(b"\r\n", pos)
            if line_end < 0:
                return None
            size = int(bytes(buf[pos:line_end]).split(b";")[0], 16)
            if size == 0:
                # The last chunk, then optional trailers and the final CRLF.
                if buf[line_end:line_end + 4] == b"\r\n\r\n":
                    return line_end + 4, status, close, body
                trailer_end = buf.find(b"\r\n\r\n", line_end)
                return (trailer_end + 4, status, close, body) if trailer_end >= 0 else None
            if len(buf) < line_end + 2 + size + 2:
                return None
            body += buf[line_end + 2:line_end + 2 + size]
            pos = line_end + 2 + size + 2
    if status in (204, 304) or 100 <= status < 200:
        return start, status, close, b""
    if close:
        return None  # body runs to EOF; not used by the servers these drivers measure
    raise ParseError("response without Content-Length or chunked framing")


def percentile(sorted_values, p):
    """Nearest-rank percentile of an already sorted list (0.0 when empty)."""
    if not sorted_values:
        return 0.0
    rank = max(1, int(-(-p * len(sorted_values) // 100)))
    return sorted_values[min(rank, len(sorted_values)) - 1]

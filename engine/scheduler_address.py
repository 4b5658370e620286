"""A Dask scheduler's address, checked before anything connects, and the connection to it
made within a deadline (``--scheduler-timeout``, ``config.CLUSTER_CONNECT_SECONDS``).

Dask's own client took 20 s to fail on an address without a port or with a scheme it
does not serve (``foo``, ``tcp://host``, ``http://…``, ``inproc://x``), and then printed
a traceback from its destructor; it waited forever on a TCP listener that is not a Dask
scheduler (a web server, the dashboard's port: Dask reads the peer's handshake without a
deadline), and a peer that sends random bytes made it allocate what their first eight
bytes say ("out of memory"). So the address is parsed here first, and a plain socket
reads the scheduler's handshake frame, whose size and layout it checks, before Dask's
client is made.
"""

from __future__ import annotations

import re
import socket
import struct
import time

from engine import config

#: The protocols a remote Dask scheduler listens on (``inproc://`` lives in one process,
#: ``ucx://`` needs UCX on both sides and is not offered).
SCHEMES = ("tcp", "tls")
#: The handshake (compression, pickle protocol, Python version) is a few hundred bytes.
_HANDSHAKE_MAX_BYTES = 1 << 16
_HANDSHAKE_MAX_FRAMES = 64
_FORM = re.compile(r"^(?:(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://)?"
                   r"(?P<host>\[[0-9A-Fa-f:.]+\]|[^\s/:\[\]@]*)(?::(?P<port>[^\s/]*))?/?$")


def check(value) -> str | None:
    """The address as given (stripped): ``SCHEME://HOST:PORT``, or ``HOST:PORT`` (tcp); None
    for a local cluster (None or blank). ValueError, one line, for anything else."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    text = value.strip() if isinstance(value, str) else value
    m = _FORM.match(text) if isinstance(text, str) else None
    scheme = ((m and m["scheme"]) or "tcp").lower()
    port = m and m["port"]
    if m is None:
        why = "not an address"
    elif scheme not in SCHEMES:
        why = f"{scheme}:// is not a protocol a Dask scheduler serves to other processes"
    elif not m["host"]:
        why = "no host"
    elif not port:
        why = "no port; Dask's is 8786"
    elif not port.isdigit() or not 1 <= int(port) <= 65535:
        why = "the port must be 1 to 65535"
    else:
        return text
    raise ValueError(f"--scheduler must be an address like tcp://HOST:PORT, got {value!r} ({why})")


def _host_port(address: str) -> tuple[str, int]:
    rest = address.split("://", 1)[-1].rstrip("/")
    host, _, port = rest.rpartition(":")
    return host.strip("[]"), int(port)


def _read(sock: socket.socket, n: int, deadline: float) -> bytes:
    """``n`` bytes, or fewer if the peer closes; socket.timeout past ``deadline``."""
    out = bytearray()
    while len(out) < n:
        left = deadline - time.monotonic()
        if left <= 0:
            raise socket.timeout
        sock.settimeout(left)
        chunk = sock.recv(n - len(out))
        if not chunk:
            break
        out += chunk
    return bytes(out)


def probe(address: str, timeout: float) -> None:
    """Connect to ``address`` (a :func:`check`-ed one) and read the frame a Dask scheduler
    sends first (its handshake), within ``timeout`` seconds in all; ValueError saying why
    it is not a scheduler. (A ``tls://`` handshake is encrypted: only the connection is
    tried.)"""
    host, port = _host_port(address)
    deadline = time.monotonic() + timeout
    try:
        sock = socket.create_connection((host, port), timeout=timeout)
    except socket.timeout:
        raise ValueError(f"cannot reach the Dask scheduler at {address} within {timeout:g} s "
                         f"(--scheduler-timeout)") from None
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ValueError(f"cannot reach the Dask scheduler at {address} ({reason})") from None
    not_dask = f"{address} is not a Dask scheduler"
    with sock:
        if address.startswith("tls://"):
            return
        try:
            head = _read(sock, 8, deadline)
            if len(head) < 8:
                raise ValueError(f"{not_dask}: it closed the connection without a handshake")
            (size,) = struct.unpack("Q", head)
            if not 16 <= size <= _HANDSHAKE_MAX_BYTES:
                raise ValueError(f"{not_dask}: its first message is not a Dask handshake")
            body = _read(sock, size, deadline)
        except socket.timeout:
            raise ValueError(f"{not_dask}: it sent no handshake within {timeout:g} s "
                             f"(--scheduler-timeout)") from None
        except OSError as exc:
            raise ValueError(f"{not_dask}: {exc.strerror or type(exc).__name__}") from None
    if len(body) < size:
        raise ValueError(f"{not_dask}: it closed the connection during the handshake")
    (frames,) = struct.unpack_from("Q", body)
    if not 1 <= frames <= _HANDSHAKE_MAX_FRAMES or 8 * (1 + frames) > size:
        raise ValueError(f"{not_dask}: its first message is not a Dask handshake")


def connect(address: str, timeout: float | None = None):
    """A ``distributed.Client`` of the scheduler at ``address`` (checked, then probed),
    within ``timeout`` seconds (default ``config.CLUSTER_CONNECT_SECONDS``); ValueError,
    one line, when it is not one or does not answer in time."""
    from distributed import Client

    timeout = config.CLUSTER_CONNECT_SECONDS if timeout is None else timeout
    address = check(address)
    probe(address, timeout)
    try:
        return Client(address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        text = " ".join(str(exc).split()) or type(exc).__name__
        raise ValueError(f"cannot reach the Dask scheduler at {address} ({text[:200]})") from None

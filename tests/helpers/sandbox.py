"""Generated code that tries to reach outside the sandbox, for the EternalMath tests at two levels (instantiation
alone, and the whole build): a canary file in the home folder, the store, and a listener on the host's loopback."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def reaching_code(canary: Path, store_file: Path) -> Iterator[str]:
    """A template's formal solution over ``n``: n = 1 reads ``canary``, n = 2 reads ``store_file``, n = 3 connects
    to a listener on 127.0.0.1 (had one worked, its text would be the answer). After the block, nobody connected."""
    listener = socket.socket()
    try:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]
        yield (f"if n == 1:\n    result = open({str(canary)!r}).read()\n"
               f"elif n == 2:\n    result = open({str(store_file)!r}, 'rb').read().decode('latin-1')\n"
               f"else:\n    import socket\n    s = socket.create_connection(('127.0.0.1', {port}), timeout=2)\n"
               f"    s.sendall(b'leak')\n    result = 'connected'\n")  # fmt: skip
        listener.setblocking(False)
        with pytest.raises(BlockingIOError):  # nobody connected
            listener.accept()
    finally:
        listener.close()


def assert_nothing_reached(reasons: dict[int, str]) -> None:
    """The rejection reasons by ``n``: neither file exists inside the sandbox, and the connection failed."""
    assert sorted(reasons) == [1, 2, 3]
    assert reasons[1].startswith("FileNotFoundError: ") and reasons[2].startswith("FileNotFoundError: ")
    assert reasons[3].split(":")[0] in ("ConnectionRefusedError", "PermissionError", "OSError")

"""Command line of ``python -m theorembench.testing.fakellm``: serve a script, print ``PORT <n>``, stop on a signal."""

from __future__ import annotations

import argparse
import asyncio
import sys

from theorembench.testing import fakellm
from theorembench.testing.fakellm.server import FakeLLMServer


def main(argv: list[str] | None = None) -> int:
    description = (fakellm.__doc__ or "").splitlines()[0]
    parser = argparse.ArgumentParser(prog="python -m theorembench.testing.fakellm", description=description)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--script", default=None, help="JSON script file")
    parser.add_argument("--no-bodies", action="store_true", help="do not keep request bodies in the log")
    args = parser.parse_args(argv)
    server = FakeLLMServer(args.script, port=args.port, keep_bodies=not args.no_bodies)
    asyncio.run(server._serve_cli(args.host))
    return 0


if __name__ == "__main__":
    sys.exit(main())

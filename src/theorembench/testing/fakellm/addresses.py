"""URL properties shared by the in-process server and the child-process handle."""

from __future__ import annotations


class Addresses:
    """URLs of a fake server, from its ``port``."""

    port: int

    @property
    def url(self) -> str:
        """Server root URL (``http://127.0.0.1:PORT``)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """Base URL for the OpenAI SDK (``http://127.0.0.1:PORT/v1``)."""
        return f"{self.url}/v1"

    @property
    def anthropic_base_url(self) -> str:
        """Base URL for the Anthropic SDK (``http://127.0.0.1:PORT``)."""
        return self.url

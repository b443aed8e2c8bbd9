"""theorembench: research-mathematics benchmarks for LLMs, built and evaluated from one store."""

__version__ = "0.1.0"

"""Foundations every layer may use: file locations, TOML settings, retries, atomic output files."""

"""Benchmark construction methods: one subpackage per method."""

"""Benchmark tools (not runtime): indexing, query and scale figures measured on this machine.

`assistant bench` runs `assistant.bench.runner.run`; nothing here is imported by the assistant itself.
"""

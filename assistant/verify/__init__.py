"""Checking an answer: citation markers and whether each quote supports its claim."""

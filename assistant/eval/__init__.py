"""Evaluation tools (not runtime): question sets, scoring, metrics, reports, the LangChain recipe.

`assistant eval` runs `assistant.eval.runner.run`; nothing here is imported by the assistant itself.
"""

"""Prompt templates, one `<name>.txt` file each; read by `assistant.answer.prompts.load_prompt`.

A package of its own so the templates ship inside the wheel while staying in this top-level
folder, where people tune wording without touching Python.
"""

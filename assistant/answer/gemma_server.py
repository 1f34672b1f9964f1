"""llama-cpp-python's server, with a Gemma chat format that keeps the system message.

The shipped GGUF carries no chat template, and llama-cpp-python's own `gemma` format drops
`role="system"` messages (Gemma has no system turn), so the answer rules never reached the model:
it saw the context and the question only. Gemma 3's published template puts the system text at
the start of the first user turn; `gemma-system` does the same. Run as
`python -m assistant.answer.gemma_server <llama_cpp.server arguments>`; `local_server` does.
"""

from __future__ import annotations

from typing import Any

CHAT_FORMAT = "gemma-system"
_TURN = "<start_of_turn>{role}\n{content}<end_of_turn>\n"


def gemma_prompt(messages: list[dict[str, Any]]) -> str:
    """The prompt text for `messages`, the system text leading the first user turn."""
    system = "\n\n".join(str(m.get("content") or "") for m in messages if m.get("role") == "system")
    prompt, pending = "", system
    for message in messages:
        role, content = message.get("role"), str(message.get("content") or "")
        if role == "user":
            if pending:
                content, pending = f"{pending}\n\n{content}", ""
            prompt += _TURN.format(role="user", content=content)
        elif role == "assistant":
            prompt += _TURN.format(role="model", content=content)
    return prompt + "<start_of_turn>model\n"


def main() -> None:
    from llama_cpp.llama_chat_format import ChatFormatterResponse, register_chat_format
    from llama_cpp.server.__main__ import main as serve

    def format_gemma_system(messages: list[dict[str, Any]], **kwargs: Any) -> Any:
        return ChatFormatterResponse(prompt=gemma_prompt(messages), stop="<end_of_turn>")

    register_chat_format(CHAT_FORMAT)(format_gemma_system)
    serve()  # reads sys.argv, as `python -m llama_cpp.server` does


if __name__ == "__main__":
    main()

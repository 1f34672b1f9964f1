"""From retrieved entries to an answer: the chain, context, refusal, chat models, prompts."""

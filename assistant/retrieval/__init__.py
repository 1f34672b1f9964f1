"""Finding the entries that answer a question: hybrid search and optional re-ranking."""

"""Reading a question: what it asks for (intent, value kind), the names it uses, shop talk."""

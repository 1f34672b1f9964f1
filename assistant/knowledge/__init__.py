"""Reading knowledge files into entries: one reader per format, asked-as descriptions."""

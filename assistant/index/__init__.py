"""The index: chunks, encoders, Chroma and the lexical index, the manifest, sync and locks."""

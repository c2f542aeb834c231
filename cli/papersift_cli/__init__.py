"""Command line: `papersift extract` (library only) and `papersift run` (local pipeline on embedded AWS)."""

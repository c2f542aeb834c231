"""Real-path tests: the whole pipeline on the embedded AWS (a package so its conftest is not `conftest`)."""

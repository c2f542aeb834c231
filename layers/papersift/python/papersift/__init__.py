"""papersift core: pure extraction logic. No AWS clients are created here, no
environment is read and no global state is kept; callers inject what is needed."""

__version__ = "0.1.0"

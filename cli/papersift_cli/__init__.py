"""Command line: `papersift extract` (library only) and `papersift run` (local pipeline on embedded AWS)."""

import os

# pydantic reads every installed package's entry points for plugins when it builds its first model
# (~8 ms of every command); papersift uses none. The stack's functions get the same variable
# (infra.deployment.function_environment); the core never reads it.
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")

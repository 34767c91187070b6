"""Keep CrewAI off the network: the environment to set before importing it."""

from __future__ import annotations

import os
import tempfile
from collections.abc import MutableMapping

__all__ = ["OFFLINE_SETTINGS", "offline_crewai"]

OFFLINE_SETTINGS = {
    "CREWAI_DISABLE_TELEMETRY": "true",  # anonymous usage telemetry
    "CREWAI_DISABLE_TRACKING": "true",  # the same, older name
    "CREWAI_TRACING_ENABLED": "false",  # trace upload and its consent prompt
    "CREWAI_DISABLE_VERSION_CHECK": "true",  # PyPI version lookup
    "CREWAI_TESTING": "true",  # no first-run prompt, no .crewai/ files in the current folder
}


def offline_crewai(
    storage_dir: str | None = None, environ: MutableMapping[str, str] | None = None
) -> str:
    """Set the variables that keep CrewAI quiet and local; returns its storage folder.

    Call it before the first ``import crewai`` (CrewAI reads them at import
    and kickoff). Values already set win. CrewAI's files (task outputs,
    memory) go to ``storage_dir``, an absolute path; by default a new
    temporary folder, unless ``CREWAI_STORAGE_DIR`` is already set.
    ``OTEL_SDK_DISABLED`` is left alone: it would switch off every
    OpenTelemetry SDK in the process, not only CrewAI's.
    """
    env = os.environ if environ is None else environ
    for key, value in OFFLINE_SETTINGS.items():
        env.setdefault(key, value)
    if "CREWAI_STORAGE_DIR" not in env:
        env["CREWAI_STORAGE_DIR"] = os.path.abspath(
            storage_dir or tempfile.mkdtemp(prefix="crewai-storage-")
        )
    return env["CREWAI_STORAGE_DIR"]

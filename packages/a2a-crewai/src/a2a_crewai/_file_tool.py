"""``InputFileTool``: the crew's tools read the files of the request they work for."""

from __future__ import annotations

from crewai.tools import BaseTool
from pydantic import BaseModel, Field

from ._files import ReceivedFiles
from ._runs import current_run

__all__ = ["InputFileInput", "InputFileTool"]

_MAX_READ_CHARS = 100_000
_TEXTUAL = ("text/", "application/json", "application/xml", "application/yaml")


class InputFileInput(BaseModel):
    """Which received file to read."""

    filename: str = Field(description="The file's name, as the attached files list gives it.")


class InputFileTool(BaseTool):
    """Reads a file the A2A client sent with the current request."""

    name: str = "read_input_file"
    description: str = (
        "Read a file attached to the current request, by its name from the attached "
        "files list. Text files are returned as text; other files are described "
        "(type, size, saved path)."
    )
    args_schema: type[BaseModel] = InputFileInput

    def _run(self, filename: str) -> str:
        name = filename
        run = current_run()
        files: ReceivedFiles | None = getattr(run, "files", None) if run is not None else None
        if files is None or not files:
            return "No files were attached to this request."
        path = files.paths.get(name)
        if path is None:
            if name in files.urls:
                return f"{name} was given by URL: {files.urls[name]}"
            known = ", ".join([*files.paths, *files.urls])
            return f"No attached file is named {name!r}. Attached: {known}"
        media = files.media.get(name, "application/octet-stream")
        if media.startswith(_TEXTUAL):
            text = path.read_text(encoding="utf-8", errors="replace")
            if len(text) > _MAX_READ_CHARS:
                text = text[:_MAX_READ_CHARS] + "\n[... cut]"
            return text
        return f"{name} is a {media} file of {path.stat().st_size} bytes, saved at {path}"

"""A chain for ``a2a serve lc_cli_agent.py:chain`` in the CLI option tests (offline fake model)."""

from __future__ import annotations

from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from lc_fakes import EchoChatModel

chain = (
    ChatPromptTemplate.from_messages([("human", "{text}")]) | EchoChatModel() | StrOutputParser()
)

"""Serve LangChain Runnables as A2A agents and call remote A2A agents from LangChain."""

__version__ = "0.1.0"

"""Serve CrewAI crews over A2A and call remote A2A agents from crews."""

__version__ = "0.1.0"

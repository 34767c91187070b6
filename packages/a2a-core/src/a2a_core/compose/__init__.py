"""The composition: an agent, plugins and options put together into a served A2A app.

The layer above ``a2a_core.server``: ``builder`` turns an agent and keyword options
into a service and an ASGI app (through the plugins: adapters, auth backends, card
hooks, task stores by URL), ``serve`` runs it with uvicorn (the one place that owns
the process), ``mount`` puts it inside a Starlette or FastAPI application. The server
never imports this package. Users import ``serve``, ``running_server``, ``mount`` and
``configure_service`` from ``a2a_core``.
"""

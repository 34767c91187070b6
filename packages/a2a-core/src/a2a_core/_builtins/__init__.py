"""The core's own plugins, registered through the ``a2a_core`` entry-point group like any other.

Being ordinary plugins keeps the hooks honest: what a third-party package can
do, the core does the same way (``memory://`` is just one registered scheme).
"""

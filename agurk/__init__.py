"""The ``agurk`` application: the command line (one module per command), ``play``, ``replay`` and the benchmarks.

It sits on top of every layer (``agurk_env``, ``agents``, ``training``, ``skill``) and
nothing imports it.
"""

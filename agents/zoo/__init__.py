"""The zoo: the shipped policies, package data next to this package (no download), one job per module.

- :mod:`agents.zoo.shipped`: what ships (the universal network, :data:`UNIVERSAL`, and the
  per-table policies still measured stronger at their tables, :data:`KEPT_BECAUSE`) and what each is;
- :mod:`agents.zoo.table_names`: the preset a rule set is and a table's short name;
- :mod:`agents.zoo.export`: a training checkpoint written into the zoo (weights only, blends, ensembles);
- :mod:`agents.zoo.agent`: the agent ``zoo`` (the universal network at any rules) and ``zoo:NAME``.

docs/zoo.md has the command that trains each file and its measured strength.
"""

from __future__ import annotations

from agents.zoo.agent import ZooAgent
from agents.zoo.export import export
from agents.zoo.shipped import (
    KEPT_BECAUSE,
    UNIVERSAL,
    ZOO,
    Shipped,
    available,
    catalogue,
    describe,
    path_of,
    preset_table,
    specialist_for,
)
from agents.zoo.table_names import TABLE_OPTIONS, preset_of, table_text

__all__ = [
    "KEPT_BECAUSE",
    "TABLE_OPTIONS",
    "UNIVERSAL",
    "ZOO",
    "Shipped",
    "ZooAgent",
    "available",
    "catalogue",
    "describe",
    "export",
    "path_of",
    "preset_of",
    "preset_table",
    "specialist_for",
    "table_text",
]

"""Every method family, one line each: importing this module makes all methods known by name.

Adding a method: write it in a family folder (or a new one) ending in a ``METHODS`` tuple, and list it
here; a plug-in outside the package calls ``register_methods`` itself. Nothing else changes: the CLI, the
eval runner, ``trace show``, the service and the inspector read this table and the steps' own rendering.
"""

from __future__ import annotations

from tanglerag.methods.astute.method import METHODS as ASTUTE
from tanglerag.methods.auto.method import METHODS as AUTO
from tanglerag.methods.base import METHODS, make_method, method_class, register_methods
from tanglerag.methods.cdit.method import METHODS as CDIT
from tanglerag.methods.concat.method import METHODS as CONCAT
from tanglerag.methods.corg.baselines import METHODS as CORG
from tanglerag.methods.diva.methods import METHODS as DIVA
from tanglerag.methods.madam.method import METHODS as MADAM
from tanglerag.methods.pcas.retriever import METHODS as PCAS
from tanglerag.methods.post_fusion.methods import METHODS as POST_FUSION

for family in (CONCAT, POST_FUSION, CORG, DIVA, CDIT, PCAS, MADAM, ASTUTE, AUTO):
    register_methods(*family)

__all__ = ["METHODS", "make_method", "method_class", "register_methods"]

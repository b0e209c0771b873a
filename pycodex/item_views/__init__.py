"""Item views: one table saying how each ThreadItem type is shown in each client-side view.

`ITEM_VIEWS` (in :mod:`pycodex.item_views.table`) is the table; :mod:`pycodex.item_views.registry` says what a
view is and what an item of an unregistered type looks like (`FALLBACK`).
"""

from __future__ import annotations

from pycodex.item_views.registry import FALLBACK, HumanStyle, ItemView, ItemViewRegistry, camel_to_snake
from pycodex.item_views.table import ITEM_VIEWS

__all__ = ["FALLBACK", "ITEM_VIEWS", "HumanStyle", "ItemView", "ItemViewRegistry", "camel_to_snake"]

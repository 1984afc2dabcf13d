"""Deprecated: ``smddp_infra.spec`` is now :mod:`smddp_infra.schema` (one minor release).

The folder was renamed because tools, and people from other ecosystems, read a folder named
``spec/`` as tests. Every name still resolves here, with one DeprecationWarning naming the new
module; the values are the same objects, so templates are byte-identical.
"""

from __future__ import annotations

import warnings
from typing import Any

from smddp_infra import schema as _schema

__all__ = list(_schema.__all__)


def __getattr__(name: str) -> Any:
    value = getattr(_schema, name)  # AttributeError for a name the schema does not have either
    warnings.warn(f"smddp_infra.spec is deprecated: import {name} from smddp_infra.schema "
                  "(or from smddp_infra)", DeprecationWarning, stacklevel=2)
    return value

"""What the generated methods share with the hand-written client: "not given", and params without it."""

from __future__ import annotations

from typing import Any, Dict, Tuple


class Unset:
    """The type of UNSET: a parameter not given, where None means JSON null (SOURCES.UPDATE refresh)."""

    _instance: "Unset | None" = None

    def __new__(cls) -> "Unset":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNSET"

    def __bool__(self) -> bool:
        return False


UNSET = Unset()


def params_of(given: Dict[str, Any], nullable: Tuple[str, ...] = ()) -> Dict[str, Any]:
    """The params object of a call: what was given, without UNSET, and without None (not given) except
    for the parameters that admit null (`nullable`: their default is UNSET, so None is sent as null)."""
    return {k: v for k, v in given.items() if v is not UNSET and (v is not None or k in nullable)}

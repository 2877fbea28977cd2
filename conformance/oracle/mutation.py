"""Applying a mutant in this process: the mutated function swapped in wherever the impl holds
it. The oracle's runs (mutants.py) and the Spark workers it starts (mutant_env.py) apply mutants
with it."""

from __future__ import annotations
import __future__

import sys
from types import FunctionType
from typing import Any

from .catalog import Mutant, mutated_source, resolve


def apply(mutant: Mutant, target: str | None = None) -> None:
    """Swap the mutated function in, in this process only (``target``: the function's
    ``module:qualname`` when the caller already resolved it).

    The function object keeps its identity and takes the mutated code, so every reference to it
    sees the mutant: module attributes, but also the tuples and tables of rule functions the impl
    runs in order (a rebinding of names alone would leave those running the original). A
    function whose closure differs from the mutant's is rebound by name instead."""
    target = mutant.target if target is None else target
    owner, name, original = resolve(target)
    module = sys.modules[target.split(":")[0]]
    code = compile(
        mutated_source(mutant, target),
        f"<mutant {mutant.id}>",
        "exec",
        flags=__future__.annotations.compiler_flag,
        dont_inherit=True,
    )
    namespace: dict[str, Any] = {}
    exec(code, module.__dict__, namespace)
    replacement = namespace[name]
    old, new = _function(original), _function(replacement)
    same_closure = old is not None and new is not None and old.__code__.co_freevars == ()
    if same_closure and new is not None and old is not None and new.__code__.co_freevars == ():
        old.__code__ = new.__code__
        old.__defaults__, old.__kwdefaults__ = new.__defaults__, new.__kwdefaults__
        return
    setattr(owner, name, replacement)
    for other in list(sys.modules.values()):
        if getattr(other, "__name__", "").startswith("deltaspec."):
            for attr, value in list(vars(other).items()):
                if value is original:
                    setattr(other, attr, replacement)


def _function(raw: Any) -> FunctionType | None:
    """The plain function under a property, static or class method, or decorator wrapper."""
    raw = getattr(raw, "fget", raw)
    raw = getattr(raw, "__func__", raw)
    while hasattr(raw, "__wrapped__"):
        raw = raw.__wrapped__
    return raw if isinstance(raw, FunctionType) else None

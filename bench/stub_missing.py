"""`bench/executed_tables.py --stub-missing`: the generated truth-table tests with missing imports stubbed.

A diagnostic, not reviewbot's behaviour. Each generated test starts with STUB_MISSING: an import
finder consulted after every real one, which answers a top-level import nothing else can (torch,
triton, ...) and the submodules of those with an inert module: its attributes are stubs that can be
called, subclassed, decorated with and indexed. The derivation's own code runs; whatever it takes
from a stubbed package is a stub.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["STUB_MISSING", "importable", "missing_imports_stubbed"]

STUB_MISSING = """from abc import ABCMeta as _ABCMeta
import importlib.abc as _abc, importlib.machinery as _machinery, sys as _sys, types as _types


class _Anything:
    def __init__(self, name="stub"):
        self._name = name

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Anything(f"{self._name}.{attr}")

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and not kwargs and callable(args[0]) and not isinstance(args[0], _Anything):
            return args[0]  # used as a decorator: the function stays itself
        return _Anything(f"{self._name}()")

    def __mro_entries__(self, bases):
        first = next(b for b in bases if isinstance(b, _Anything))
        return (_StubBase,) if first is self else ()

    def __getitem__(self, key):
        return self

    def __or__(self, other):
        return self

    __ror__ = __or__

    def __iter__(self):
        return iter(())

    def __repr__(self):
        return f"<stub {self._name}>"


class _StubMeta(_ABCMeta):  # ABCMeta: a stub base mixes with ABC
    def __getattr__(cls, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Anything(f"{cls.__name__}.{attr}")


class _StubBase(metaclass=_StubMeta):  # what a class derived from a stub derives from
    def __init__(self, *args, **kwargs):
        pass

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Anything(attr)


class _StubModule(_types.ModuleType):
    __path__ = []

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Anything(f"{self.__name__}.{attr}")


class _StubFinder(_abc.MetaPathFinder, _abc.Loader):
    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if top in _OWN or (top != name and not isinstance(_sys.modules.get(top), _StubModule)):
            return None  # the code under test, or a name missing from a real package, stays missing
        if top in _sys.stdlib_module_names:
            return None  # another platform's module (`_winapi`): the standard library has its fallback
        return _machinery.ModuleSpec(name, self, is_package=True)

    def create_module(self, spec):
        return _StubModule(spec.name)

    def exec_module(self, module):
        pass


_OWN = {own!r}  # the top-level package of the module under test: never stubbed
_sys.meta_path.append(_StubFinder())
"""


@contextmanager
def missing_imports_stubbed() -> Iterator[None]:
    """Every truth-table test generated inside starts with STUB_MISSING."""
    from reviewbot.execution import tables

    plain = getattr(tables, "generate")  # noqa: B009 (not part of the module's API)

    def stubbed(table: Any, harness: Any, cases: Any) -> str:
        own = {harness.module.partition(".")[0]}
        return STUB_MISSING.replace("{own!r}", repr(own)) + "\n\n" + str(plain(table, harness, cases))

    setattr(tables, "generate", stubbed)  # noqa: B010
    try:
        yield
    finally:
        setattr(tables, "generate", plain)  # noqa: B010


# what the corpus's repositories import: torch and its CPU neighbours, and the GPU packages
_PROBED = (
    "torch",
    "numpy",
    "tqdm",
    "transformers",
    "triton",
    "apex",
    "sgl_kernel",
    "tvm",
    "deepspeed",
    "flashinfer",
)


def importable() -> str:
    """Which of the packages the corpus's repositories import are importable here (and their versions)."""
    from importlib import metadata, util

    found, absent = [], []
    for name in _PROBED:
        if util.find_spec(name) is None:
            absent.append(name)
            continue
        try:
            found.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            found.append(name)
    return f"{', '.join(found) or 'none'}; not: {', '.join(absent) or 'none'}"

"""The `_build` of a generated truth-table test for the function harness (execution/harness_function.py).

Each case calls the changed function with the row's values: a column that is a parameter as a keyword,
a column that is an attribute of a parameter set on a `types.SimpleNamespace` passed for it (holding the
defaults of the other attributes the function reads). `_build` returns the object the case reads the
target from: a holder of the return value, the object returned, the namespace passed, or the function's
local as it returned (`_locals_at_return`). Reading that object is left outside the recorded call: a
target the call did not leave readable is a case that did not run, not a value the code gave.
"""

from __future__ import annotations

from reviewbot.model.executed import Harness

__all__ = ["FUNCTION_STDLIB", "function_build"]

FUNCTION_STDLIB = ["contextlib", "enum", "functools", "inspect", "os", "sys", "traceback", "types"]

_BUILD = """
# Parameters passed as namespaces: the attributes `{function}` reads before writing them, at the
# defaults the module declares (the row's columns are set on top).
NAMESPACES = {namespaces}
# Required parameters no column gives and the function never reads: {given_from}.
GIVEN = {given}
{capture}

def _walk(value, names):
    return functools.reduce(getattr, names, value)


def _build(record_property, **row):
    namespaces = {{name: types.SimpleNamespace(**attrs) for name, attrs in NAMESPACES.items()}}
    kwargs = dict(GIVEN)
    for name, value in row.items():
        param, dot, attribute = name.partition(".")
        if dot:
            setattr(namespaces[param], attribute, value)
        else:
            kwargs[name] = value
    try:
{call}
    except Exception as exc:
        _raised(record_property, exc)
        raise
    return {holder}
"""

_CALL = "        returned = {callee}(**namespaces, **kwargs)"
_CALL_CAPTURED = """        with _locals_at_return({callee}) as seen:
            {callee}(**namespaces, **kwargs)"""

# The target is a local of the function: the profile hook sees only call and return events (no line
# tracing) and keeps the locals of the outermost frame of that one code object as it returns.
_CAPTURE = """

@contextlib.contextmanager
def _locals_at_return(function):
    code = inspect.unwrap(getattr(function, "__func__", function)).__code__
    seen, depth = {}, [0]

    def hook(frame, event, arg):
        if frame.f_code is not code or event not in ("call", "return"):
            return
        depth[0] += 1 if event == "call" else -1
        if event == "return" and depth[0] == 0:
            seen.update(frame.f_locals)

    previous = sys.getprofile()
    sys.setprofile(hook)
    try:
        yield seen
    finally:
        sys.setprofile(previous)


def _bound(seen, name):
    if name not in seen:
        raise LookupError(f"`{name}` is not bound when the function returns")
    return seen[name]
"""


def _namespaces_source(h: Harness) -> str:
    """`{'args': {'rank': 0}}`: each value is the module's default as Python source, not a repr."""

    def attrs(pairs: tuple[tuple[str, str], ...]) -> str:
        return "{" + ", ".join(f"{a!r}: {v}" for a, v in pairs) + "}"

    return "{" + ", ".join(f"{p!r}: {attrs(pairs)}" for p, pairs in h.namespaces) + "}"


def _walked(value: str, names: list[str]) -> str:
    return f"_walk({value}, {tuple(names)!r})" if names else value


def _holder(h: Harness) -> str:
    parts = h.read_from.split(".") if h.read_from else []
    if h.reads == "return":
        return f"types.SimpleNamespace({h.target}=returned)"
    if h.reads == "returned":
        return _walked("returned", parts[1:])
    if h.reads == "param":
        return _walked(f"namespaces[{parts[0]!r}]", parts[1:])
    if not parts:  # a local name itself
        return f"types.SimpleNamespace({h.target}=_bound(seen, {h.target!r}))"
    return _walked(f"_bound(seen, {parts[0]!r})", parts[1:])


def function_build(h: Harness) -> str:
    """The `_build` of the function harness `h` (and its helpers), as Python source."""
    local = h.reads == "local"
    call = (_CALL_CAPTURED if local else _CALL).format(callee=h.callable)
    return _BUILD.format(
        function=h.function,
        namespaces=_namespaces_source(h),
        capture=_CAPTURE if local else "",
        call=call,
        holder=_holder(h),
        given="{" + ", ".join(f"{k!r}: {v}" for k, v in h.given) + "}",
        given_from=h.given_from or "none",
    )

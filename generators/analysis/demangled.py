"""Pieces of demangled C++ kernel names: the short name, and a key that survives two demanglers.

Kernel names reach us already demangled, by two different demanglers: Kineto (CUPTI, the
``__cxa_demangle`` family) and Nsight Compute. They disagree on many details of the same
symbol::

    Kineto: void at::native::(anonymous namespace)::indexSelectSmallIndex<c10::BFloat16, long,
            unsigned int, 2, 2, -2>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, ...)
    ncu:    void at::<unnamed>::indexSelectSmallIndex<c10::BFloat16, long, unsigned int, 2, 2,
            (int)-2>(cuda::TensorInfo<T1, T3>, ...)

(ncu drops ``at::native::`` and some other namespaces, writes ``[lambda(int) (instance 1)]``
for ``{lambda(int)#1}``, ``0``/``1`` for ``false``/``true``, ``3`` for ``3ul``, ``const T``
for ``T const``, and ``T1``-style placeholders in parameter lists and return types.)

:func:`join_key` reduces a name to what both keep: the identifier and number tokens of the
kernel's qualified name and template arguments, after

1. ``(instance N)`` -> ``#N`` and both spellings of the anonymous namespace -> one token;
2. dropping the return type (everything before the kernel name at bracket depth 0) and the
   parameter list (the first ``(`` at depth 0 after the name);
3. dropping every parenthesised group left inside the template arguments (nested parameter
   lists, ``(int)`` casts, ``operator()`` calls);
4. dropping namespace/class qualifiers (``a::b::c`` -> ``c``), since ncu drops some of them;
5. number suffixes (``3ul`` -> ``3``), ``true``/``false`` -> ``1``/``0``, and the stop
   words in :data:`STOP` (``const``, ``void``, ...).

Names without templates (``nvjet_...``, cuDNN's generated kernels) are spelled the same by
both, and their key is simply their tokens.

Written by hand: the libraries that handle C++ symbols (``cxxfilt``, LLVM's demangler)
turn *mangled* names into text; none parses demangled text back into its parts, which is
all that is available in these exports.
"""

from __future__ import annotations

import re

OPEN, CLOSE = "<([{", ">)]}"
ANON = re.compile(r"\(anonymous namespace\)|<unnamed>|\{anonymous\}")
INSTANCE = re.compile(r"\s*\(instance (\d+)\)")
QUALIFIER = re.compile(r"[A-Za-z_]\w*\s*::\s*")
TOKEN = re.compile(r"[A-Za-z_]\w*|\d\w*")
NUMBER_SUFFIX = re.compile(r"^(\d+)(?:[uU]?[lL]{0,2}|[lL]{1,2}[uU]?)$")
#: Tokens one demangler writes and the other does not (or not in the same place).
STOP = frozenset({"void", "const", "volatile", "operator", "anonymous_namespace", "struct", "class", "typename"})
_ANON_TOKEN = "anonymous_namespace"


def _depth_scan(text: str):
    """(index, char, depth before the char) for every character, over all bracket kinds.

    ``->`` and ``operator<``-style names do not occur in kernel names; a stray closing
    bracket never takes the depth below zero."""
    depth = 0
    for i, ch in enumerate(text):
        if ch in CLOSE:
            depth = max(depth - 1, 0)
            yield i, ch, depth
            continue
        yield i, ch, depth
        if ch in OPEN:
            depth += 1


def _prepare(name: str) -> str:
    text = INSTANCE.sub(r"#\1", name)
    return ANON.sub(_ANON_TOKEN, text)


def split(name: str) -> tuple[str, str, str]:
    """(return type, qualified name with template arguments, parameter list) of a name.

    The parameter list is the first ``(`` at depth 0 that follows a name character or a
    closing ``>``; the return type is whatever precedes the last space at depth 0 before it.
    A name without a parameter list (``nvjet_...``) is all qualified name."""
    text = _prepare(name).strip()
    params_at = len(text)
    for i, ch, depth in _depth_scan(text):
        if ch == "(" and depth == 0 and i > 0 and (text[i - 1].isalnum() or text[i - 1] in "_>"):
            params_at = i
            break
    head, params = text[:params_at], text[params_at:]
    spaces = [i for i, ch, depth in _depth_scan(head) if ch == " " and depth == 0]
    if spaces:
        return head[: spaces[-1]].strip(), head[spaces[-1] + 1 :].strip(), params
    return "", head, params


def _without_groups(text: str, opening: str = "(") -> str:
    """``text`` with every bracketed group of the given kind removed (contents included)."""
    closing = CLOSE[OPEN.index(opening)]
    out, depth = [], 0
    for ch in text:
        if ch == opening:
            depth += 1
        elif ch == closing and depth:
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def short_name(name: str) -> str:
    """The function name alone: no return type, namespaces, template arguments or parameters.

    ``void at::native::reduce_kernel<512, 1, ...>(...)`` -> ``reduce_kernel``."""
    _, qualified, _ = split(name)
    bare = _without_groups(_without_groups(qualified, "<"), "(")
    bare = re.sub(r"\s+", " ", bare).strip()
    parts = [p for p in re.split(r"\s*::\s*", bare) if p]
    return parts[-1] if parts else name.strip()


def join_key(name: str) -> tuple[str, ...]:
    """Tokens of a kernel name that Kineto's and Nsight Compute's demanglers agree on."""
    _, qualified, _ = split(name)
    text = QUALIFIER.sub("", _without_groups(qualified, "("))
    out = []
    for token in TOKEN.findall(text):
        if (m := NUMBER_SUFFIX.match(token)) is not None:
            token = m.group(1)
        token = {"true": "1", "false": "0"}.get(token, token)
        if token not in STOP:
            out.append(token)
    return tuple(out)

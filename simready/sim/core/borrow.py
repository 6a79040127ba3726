"""Borrowed array views for compiled loops (numba): the same array without its reference count.

Why: numba counts references to every array it passes across a compiled call that is not inlined (an atomic
increment on entry and a decrement on exit, per array argument) and to every view it takes (a slice, a reshape).
dynamic-v1's compiled ticks (:func:`simready.sim.backends.dynamic.ticks.run_dynamic_ticks`) pass ~80 arrays fixed
for the whole run (the map's and the lanes' tables, the bodies, the recorder's buffers) to the planner's tick
(:func:`simready.sim.core.tick_kernels.run_ticks`), the physics (:func:`simready.sim.backends.dynamic.capi.tick_step`)
and the rows (:func:`simready.sim.backends.dynamic.kernels.finish_rows_into`) each tick: ~1 400 atomic operations a
tick, ~7 % of a rollout's CPU. A borrowed view (:func:`borrowed`) is an array with no owner attached (numba's
``meminfo`` and ``parent`` null): numba's increment and decrement of it test the null pointer and return.

Safety: a borrowed view does not keep its memory alive, and numba frees an array after its variable's last use,
views or not. Take views of a compiled function's *arguments* (the caller, Python, holds them for the whole call), of
an array a variable still holds wherever the views are used (state carried from tick to tick, up to its
replacement), or of arrays the function allocates with a later use of them to hold them (:func:`alive`); and never
let one escape the call (return it, store it): Python would get an array with no owner.

Bits: the same data pointer, shape and strides; every read and write goes to the same memory as the argument's.
"""

from __future__ import annotations

from numba.core import cgutils, types
from numba.core.types.containers import BaseTuple
from numba.extending import intrinsic


@intrinsic
def borrowed(typingctx, arrays):  # type: ignore[no-untyped-def]
    """The arrays of the tuple ``arrays`` as views without an owner (their reference counts untouched by numba; see
    the module's safety note): a tuple of the same types, data, shapes and strides."""
    if not isinstance(arrays, BaseTuple) or not all(isinstance(a, types.Array) for a in arrays):
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        views = []
        for k, ty in enumerate(arrays):
            view = context.make_array(ty)(context, builder, value=builder.extract_value(args[0], k))
            view.meminfo = cgutils.get_null_value(view.meminfo.type)
            view.parent = cgutils.get_null_value(view.parent.type)
            views.append(view._getvalue())
        return context.make_tuple(builder, arrays, views)

    return arrays(arrays), codegen


@intrinsic
def alive(typingctx, owned):  # type: ignore[no-untyped-def]
    """Nothing: a use of ``owned`` (a tuple of arrays the function allocated and borrowed views of), placed where
    those views are used for the last time, so numba keeps the arrays until there."""
    if not isinstance(owned, BaseTuple):
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return context.get_dummy_value()

    return types.none(owned), codegen

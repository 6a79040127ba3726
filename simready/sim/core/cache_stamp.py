"""numba's on-disk cache keyed to the kernels a cached function carries, not only to its own file.

numba keys a ``cache=True`` function's cache to the contents of the file that defines it. A function that calls
kernels of other modules carries compiled copies of them, so an edit of one of those would leave the cache stale
and the old code running. A module registers the files whose kernels its functions call
(:func:`stamp_callees`, before its cached functions are defined); its cache locators (:class:`_CalleesStamp`) then
add those files' contents to the key. The registration is one level deep: a module lists the files of its callees'
callees too (``tests/test_kernel_cache.py`` checks the lists against the kernels' calls).
"""

from __future__ import annotations

import hashlib
import os

from numba.core import caching

#: Per module whose cached functions carry compiled copies of other modules' kernels: those modules' files
#: (:func:`stamp_callees`).
_STAMPED: dict[str, tuple[str, ...]] = {}


def stamp_callees(module_file: str, callees: tuple[str, ...]) -> None:
    """Key the numba cache of the module at ``module_file`` to the contents of ``callees`` too (the files of the
    kernels its functions call): call it before that module's ``cache=True`` functions are defined."""
    _STAMPED[os.path.abspath(module_file)] = tuple(callees)


class _CalleesStamp:
    """A numba cache locator mixin for the registered modules' functions (:func:`stamp_callees`): the source stamp is
    the module file's and its callees' contents, so editing a kernel a cached function calls invalidates its cache
    too."""

    _py_file: str

    def get_source_stamp(self) -> object:
        own = super().get_source_stamp()  # type: ignore[misc]
        callees = _STAMPED[os.path.abspath(self._py_file)]
        return (own, *(hashlib.sha256(open(p, "rb").read()).hexdigest() for p in callees))

    @classmethod
    def from_function(cls, py_func: object, py_file: str) -> object:
        if os.path.abspath(py_file) not in _STAMPED:
            return None
        return super().from_function(py_func, py_file)  # type: ignore[misc]


def _install_locators() -> None:
    """Put :class:`_CalleesStamp` versions of numba's file-backed locators first (once)."""
    classes = caching.CacheImpl._locator_classes
    if any(getattr(c, "_simready_callees", False) for c in classes):
        return
    mine = [type(f"Callees{base.__name__}", (_CalleesStamp, base), {"_simready_callees": True})
            for base in (caching.UserProvidedCacheLocator, caching.InTreeCacheLocator, caching.UserWideCacheLocator)]
    classes[:0] = mine


_install_locators()


def stamped(module_file: str) -> tuple[str, ...]:
    """The files registered for the module at ``module_file`` (empty when none were)."""
    return _STAMPED.get(os.path.abspath(module_file), ())

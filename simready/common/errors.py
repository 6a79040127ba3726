"""Errors a user can cause, each printed by the CLI as one line.

Every error names the file and the field path it is about, so that a user
can fix the input without reading a traceback. Bugs raise ordinary Python
exceptions instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path


class SimreadyError(Exception):
    """Base of every user-facing input error.

    Attributes:
        source: the file (or logical source such as a partition key) at fault.
        field: a dotted/bracketed field path inside it (``regions[2].polygon``),
            or "" when the whole file is at fault.
        reason: what is wrong, in words.
    """

    kind = "input"

    def __init__(self, source: str | Path, field: str, reason: str) -> None:
        self.source = str(source)
        self.field = field
        self.reason = reason
        super().__init__(self.one_line())

    def one_line(self) -> str:
        where = f"{self.source}: {self.field}" if self.field else self.source
        return f"{where}: {self.reason}"


class TemplateError(SimreadyError):
    kind = "template"


class CatalogError(SimreadyError):
    kind = "catalog"


class OntologyError(SimreadyError):
    kind = "ontology"


class ManifestError(SimreadyError):
    kind = "manifest"


class OutputExistsError(SimreadyError):
    kind = "output"


class IntegrityError(SimreadyError):
    """A file whose bytes are not the ones recorded for it (a recorded sha256), or that disagrees with the files
    it belongs with (a trace that is not its manifest's)."""

    kind = "integrity"


class StoreKeyError(SimreadyError):
    """An artifact key that is not a relative POSIX path inside the store (absolute, ``..``, empty parts)."""

    kind = "store"


class StoreError(SimreadyError):
    """The artifact store cannot do what a stage asked: its endpoint does not answer, the bucket is missing, the
    credentials are refused. The source is the object (``s3://bucket/key``) the request was about."""

    kind = "store"


def pydantic_reason(err: Mapping[str, object]) -> str:
    """One pydantic validation error's message as a reason: without the "Value error, " pydantic puts before the
    message of a validator that raised ``ValueError`` (the reason says what is wrong already)."""
    return str(err["msg"]).removeprefix("Value error, ")

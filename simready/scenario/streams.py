"""Named random streams (SPEC §0.5): one independent generator per concern.

Why named streams: a draw added to one concern (say, one more environment
parameter) must not shift any other concern's draws, or every sample of an
experiment changes when one sampler grows. Each stream's seed is therefore a
function of the root sample id and the stream's *name* only, never of which
other streams exist or in which order they were asked for.

Derivation: ``SeedSequence(entropy=int(sha256(root id)), spawn_key=(int(sha256(name)),))``
yields the stream's 63-bit seed (what the manifest stores under ``streams``),
and the generator is ``Generator(PCG64(SeedSequence(seed)))``. Going through the
stored seed means a manifest's ``streams`` alone rebuilds every generator
(:meth:`StreamSet.from_seeds`), including a stream deliberately redrawn for an
independent-disturbance repeat (SPEC §9).

Checkpoints store :meth:`StreamSet.state` (PCG64 states, plain JSON) and
resume with :meth:`StreamSet.from_state`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
from numpy.random import PCG64, Generator, SeedSequence

STREAM_NAMES = ("layout", "actors", "behavior", "environment", "sensor", "timing", "disturbance")
# A canonical name, optionally narrowed per entity: "disturbance/ped_1".
STREAM_NAME_PATTERN = r"^[a-z][a-z0-9_]*(?:/[A-Za-z0-9_.:\-]+)*$"
_STREAM_NAME = re.compile(STREAM_NAME_PATTERN)
SEED_BITS = 63
_BIT_GENERATOR = "PCG64"
_STATE_VERSION = 1


def _digest_int(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest(), "big")


def root_seed(root_sample_id: str) -> int:
    """The 63-bit seed of a sample (the manifest's ``seed``): top bits of sha256(root id)."""
    return _digest_int(root_sample_id) >> (256 - SEED_BITS)


def stream_seed(root_sample_id: str, name: str) -> int:
    """The 63-bit seed of stream ``name`` under ``root_sample_id``."""
    ss = SeedSequence(entropy=_digest_int(root_sample_id), spawn_key=(_digest_int(name),))
    return int(ss.generate_state(1, dtype=np.uint64)[0]) >> (64 - SEED_BITS)


def _check_name(name: str) -> str:
    if not isinstance(name, str) or not _STREAM_NAME.match(name):
        raise ValueError(f"invalid stream name {name!r}: must match {STREAM_NAME_PATTERN}")
    return name


def _check_seed(name: str, seed: object) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**SEED_BITS:
        raise ValueError(f"stream {name!r}: seed must be an int in [0, 2**{SEED_BITS})")
    return seed


class StreamSet:
    """The random streams of one sample, created lazily by name.

    ``stream(name)`` returns the same generator object on every call, so
    draws continue where they left off.
    """

    def __init__(self, root_sample_id: str) -> None:
        if not isinstance(root_sample_id, str) or not root_sample_id:
            raise ValueError("root_sample_id must be a non-empty string")
        self._root_id = root_sample_id
        self._seeds: dict[str, int] = {}
        self._generators: dict[str, Generator] = {}

    @classmethod
    def from_seeds(cls, root_sample_id: str, seeds: Mapping[str, int]) -> StreamSet:
        """Rebuild the streams a manifest recorded (``manifest.sample_id``, ``manifest.streams``).

        A seed given here wins over the derived one, so a stream redrawn for a
        repeat reproduces too; streams not named are derived as usual.
        """
        out = cls(root_sample_id)
        out._seeds = {_check_name(n): _check_seed(n, s) for n, s in seeds.items()}
        return out

    @property
    def root_sample_id(self) -> str:
        return self._root_id

    @property
    def root_seed(self) -> int:
        return root_seed(self._root_id)

    def seed(self, name: str) -> int:
        """The 63-bit seed of stream ``name``."""
        _check_name(name)
        if name not in self._seeds:
            self._seeds[name] = stream_seed(self._root_id, name)
        return self._seeds[name]

    def stream(self, name: str) -> Generator:
        """The generator of stream ``name``, created on first use."""
        gen = self._generators.get(name)
        if gen is None:
            gen = Generator(PCG64(SeedSequence(self.seed(name))))
            self._generators[name] = gen
        return gen

    def seeds(self, names: Iterable[str] = STREAM_NAMES) -> dict[str, int]:
        """``{name: seed}`` for ``names`` plus every stream already used, sorted by name."""
        wanted = set(names) | set(self._generators)
        return {name: self.seed(name) for name in sorted(wanted)}

    def state(self) -> dict[str, Any]:
        """JSON-serializable state: root id, seeds, and the bit-generator state of every used stream."""
        return {
            "version": _STATE_VERSION,
            "root_sample_id": self._root_id,
            "seeds": self.seeds(),
            "bit_generators": {name: self._generators[name].bit_generator.state for name in sorted(self._generators)},
        }

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> StreamSet:
        """Resume from :meth:`state`: every used stream continues exactly where it stopped."""
        if state.get("version") != _STATE_VERSION:
            raise ValueError(f"unsupported stream state version {state.get('version')!r}")
        out = cls.from_seeds(state["root_sample_id"], state["seeds"])
        for name, bg_state in state["bit_generators"].items():
            if bg_state.get("bit_generator") != _BIT_GENERATOR:
                raise ValueError(f"stream {name!r}: expected a {_BIT_GENERATOR} state")
            bit_generator = PCG64(0)  # placeholder seed, overwritten by the saved state
            # numpy types the setter as its own TypedDict; this is the mapping state() saved (checked above).
            bit_generator.state = dict(bg_state)  # type: ignore[assignment]
            out._generators[_check_name(name)] = Generator(bit_generator)
        return out

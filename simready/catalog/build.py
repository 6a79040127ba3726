"""Build the certified catalog artifact: generate what is missing, certify, report.

The report's ``data_version`` is the canonical hash of every entry's
``entry.json`` hash (which pins the render, collider and URDF file hashes), so
fixing one collider changes it and nothing else does.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from simready.artifacts import layout
from simready.common import paths
from simready.common.atomic import write_json_atomic
from simready.catalog.catalog import ensure_catalog
from simready.catalog.certify import certify_catalog
from simready.common.hashing import content_hash, file_sha256

DVC_LOCK = paths.PROJECT_ROOT / "dvc.lock"
CATALOG_STAGE = "catalog"


@dataclass
class CatalogBuild:
    report: dict[str, Any]
    report_path: Path

    @property
    def data_version(self) -> str:
        version: str = self.report["data_version"]
        return version

    @property
    def all_passed(self) -> bool:
        return bool(self.report["all_passed"])

    @property
    def certified_ids(self) -> set[str]:
        return {e["id"] for e in self.report["entries"] if e["passed"]}


def dvc_locked_md5(stage: str = CATALOG_STAGE, lock: Path = DVC_LOCK) -> str | None:
    """DVC's recorded hash of a stage's first output (plain YAML; DVC itself is not imported)."""
    if not lock.exists():
        return None
    data = yaml.safe_load(lock.read_text()) or {}
    outs = (data.get("stages", {}).get(stage) or {}).get("outs") or []
    return outs[0].get("md5") if outs else None


def entry_hashes(generated_dir: Path) -> dict[str, str]:
    """``{entry id: sha256 of entry.json}`` for every generated entry, sorted by id."""
    out: dict[str, str] = {}
    for entry_file in sorted(generated_dir.glob("*/*/entry.json")):
        entry_id = json.loads(entry_file.read_text())["id"]
        out[entry_id] = file_sha256(str(entry_file))
    return dict(sorted(out.items()))


def build_certified_catalog(
    out_dir: Path,
    contracts_dir: Path = paths.CATALOG_CONTRACTS_DIR,
    generated_dir: Path = paths.CATALOG_GENERATED_DIR,
) -> CatalogBuild:
    """Regenerate what is missing or out of date, certify every entry, write the report."""
    ensure_catalog(contracts_dir, generated_dir)
    certification = certify_catalog(generated_dir)
    hashes = entry_hashes(generated_dir)
    entries = []
    for e in certification.entries:
        entries.append(
            {
                "id": e.id,
                "passed": e.passed,
                "reasons": [{"code": r.code, "message": r.message} for r in e.reasons],
                "entry_sha256": hashes.get(e.id, ""),
            }
        )
    report = {
        "generated_dir": paths.portable(generated_dir),
        "all_passed": certification.all_passed,
        "n_entries": len(entries),
        "n_passed": sum(1 for e in entries if e["passed"]),
        "entries": entries,
        "dvc_md5": dvc_locked_md5(),
        "data_version": content_hash({"entries": hashes, "passed": [e["id"] for e in entries if e["passed"]]}),
    }
    report_path = write_json_atomic(out_dir / layout.CERTIFICATION, report)
    return CatalogBuild(report, report_path)


def dvc_dir_md5(directory: Path) -> str:
    """The hash DVC 3 records for a directory output (``<md5>.dir``), computed without DVC.

    DVC hashes a directory as the md5 of the JSON list of ``{"md5", "relpath"}``
    for every file, sorted by relative path (``json.dumps(..., sort_keys=True)``).
    Comparing it with ``dvc.lock`` tells whether regenerated data is exactly
    what the lock file pins.
    """
    entries = []
    for dirpath, _dirs, files in os.walk(directory):
        for name in files:
            full = os.path.join(dirpath, name)
            with open(full, "rb") as f:
                digest = hashlib.md5(f.read()).hexdigest()
            entries.append({"md5": digest, "relpath": os.path.relpath(full, directory).replace(os.sep, "/")})
    entries.sort(key=lambda e: e["relpath"])
    return hashlib.md5(json.dumps(entries, sort_keys=True).encode("utf-8")).hexdigest() + ".dir"

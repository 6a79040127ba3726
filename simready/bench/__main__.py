"""``make bench`` (``python -m simready.bench [SECTION ...]``): print the performance figures each issue names.

Each section is a function registered in ``SECTIONS``, imported only when it
runs; a section whose dependencies are missing is reported, not silently skipped.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import sys
from pathlib import Path

SECTIONS: dict[str, str] = {
    "catalog": "simready.bench.world:bench_catalog",
    "templates": "simready.bench.world:bench_templates",
    "maps": "simready.bench.maps:run",
    "xosc": "simready.bench.xosc:run",
    "street": "simready.bench.street:run",
    "import": "simready.bench.catalog_import:run_all",
    "scenario": "simready.bench.scenario:run",
    "routing": "simready.bench.routing:run",
    "sim": "simready.bench.sim:run",
    "traffic": "simready.bench.traffic:run",
    "sensors": "simready.bench.sensors:run",
    "observe": "simready.bench.observe:run",
    "bytes": "simready.bench.sample_bytes:run",
    "gate": "simready.bench.gate:run",
    "export": "simready.bench.export:run",
    "production": "simready.bench.production:run",
    "status": "simready.bench.status:run",
    "review": "simready.bench.review:run",
}


def describe(name: str) -> str:
    """A section's one-line summary, read without importing it: the first paragraph of its function's docstring
    (where a module holds several sections), else of its module's."""
    module_name, func_name = SECTIONS[name].split(":")
    spec = importlib.util.find_spec(module_name)
    try:
        tree = ast.parse(Path(spec.origin).read_text()) if spec and spec.origin else None
    except (OSError, SyntaxError):
        tree = None
    doc = None
    if tree is not None:
        doc = ast.get_docstring(tree)
        if sum(entry.startswith(module_name + ":") for entry in SECTIONS.values()) > 1:
            funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == func_name]
            doc = (ast.get_docstring(funcs[0]) if funcs else None) or doc
    return " ".join((doc or module_name).strip().split("\n\n")[0].split())  # its first paragraph, one line


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m simready.bench", description="Print the performance figures the issues name, each "
        "beside its floor measured in the same run (make bench runs every section).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="sections:\n" + "\n".join(f"  {name:<12} {describe(name)}" for name in SECTIONS))
    p.add_argument("sections", nargs="*", metavar="SECTION", help="sections to run (default: all, in the order below)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(sys.argv[1:] if argv is None else argv)
    unknown = [s for s in args.sections if s not in SECTIONS]
    if unknown:
        print(f"simready.bench: unknown section(s) {', '.join(unknown)}; choose from {', '.join(SECTIONS)}",
              file=sys.stderr)
        return 2
    wanted = args.sections or list(SECTIONS)
    for name in wanted:
        module_name, func_name = SECTIONS[name].split(":")
        try:
            func = getattr(importlib.import_module(module_name), func_name)
        except (ImportError, AttributeError) as exc:
            print(f"{name:<12} not available: {exc}")
            continue
        func()
    return 0


if __name__ == "__main__":
    sys.exit(main())

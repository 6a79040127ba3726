"""GX Data Docs that open with no network: the CSS, JS and fonts GX's page templates load from CDNs, served from
the site's own ``static/vendor/``.

GX 1.x renders every page (``render/view/templates/page.j2``, ``index_page.j2``, ``js_script_imports.j2``) with
absolute CDN addresses for Bootstrap, jQuery, Popper, bootstrap-table, bootstrap-datepicker, Font Awesome and a
dark theme; offline, the index's table (drawn by bootstrap-table in JS) lists nothing and no page has styles. GX
puts its custom template folders *after* its own in the Jinja loader, so a custom ``page.j2`` cannot replace
them: the built pages are rewritten instead, one exact address at a time, from ``simready/vendor/data_docs/vendor.json``
(which also records where each file came from and its sha256; see the README beside it).

* Every address in ``vendor.json``'s ``urls`` becomes a path relative to the page, into ``static/vendor/``.
  ``integrity``/``crossorigin`` attributes go: a page opened from ``file://`` has an opaque origin, and Chrome
  refuses a CORS-mode script there.
* GX's logos on its own bucket become the site's ``static/images/logo-long.png`` (the dark-mode logo has no
  local copy in GX's package; the light one stands in), without GX's wall-clock ``?d=`` query.
* Vega, Vega-Lite and Vega-Embed (``UNUSED_SCRIPTS``) draw only the charts of distribution and profiling
  expectations, which no simready suite has: the tags go, and a page that calls ``vegaEmbed`` fails the build
  rather than render a blank chart.
* Any other remote stylesheet, script, image or CSS ``url()`` left in a page fails the build naming the file (a
  GX upgrade that adds one must add it to the vendored set), so a built site makes no request off the machine.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

from simready.common.atomic import write_bytes_atomic

VENDOR_DIR = Path(__file__).resolve().parents[1] / "vendor" / "data_docs"
VENDOR_MANIFEST = VENDOR_DIR / "vendor.json"
#: Where a site keeps the vendored files, relative to its root.
SITE_VENDOR = "static/vendor"
GX_WEB_ASSETS = "https://great-expectations-web-assets.s3.us-east-2.amazonaws.com/"
#: GX's remote images and the file of the site's ``static/images/`` that stands in for each.
GX_IMAGES = {"logo-long.png": "logo-long.png", "full_logo_dark.png": "logo-long.png"}
UNUSED_SCRIPTS = (
    "https://cdn.jsdelivr.net/npm/vega@5",
    "https://cdn.jsdelivr.net/npm/vega-lite@5",
    "https://cdn.jsdelivr.net/npm/vega-embed@6",
)

_SRI = re.compile(r'\s+(?:integrity="[^"]*"|crossorigin="[^"]*")')
_GX_IMAGE = re.compile(re.escape(GX_WEB_ASSETS) + r"(" + "|".join(map(re.escape, GX_IMAGES)) + r")(?:\?[^\"')\s]*)?")
#: What a browser fetches on opening a page: a script's or image's src, a stylesheet's href, a CSS url().
_REMOTE_LOAD = re.compile(
    r"""<(?:script|img|iframe)\b[^>]*\bsrc=["']?(https?:)?//[^"'\s>]+"""
    r"""|<link\b[^>]*\bhref=["']?(https?:)?//[^"'\s>]+"""
    r"""|url\(\s*["']?(https?:)?//[^)"']+""",
    re.IGNORECASE,
)


class OfflineDocsError(RuntimeError):
    """A built page still loads something from off the machine (a GX upgrade changed its templates)."""


@functools.cache
def vendor_manifest() -> dict[str, Any]:
    """``vendor.json``: ``urls`` (CDN address → vendored file), ``packages`` (provenance), ``sha256`` (per file)."""
    manifest: dict[str, Any] = json.loads(VENDOR_MANIFEST.read_text(encoding="utf-8"))
    return manifest


def install_vendor(site: Path) -> None:
    """Copy the vendored files (each checked against its recorded sha256) into ``site/static/vendor/``."""
    dest = site / SITE_VENDOR
    for rel, digest in vendor_manifest()["sha256"].items():
        data = (VENDOR_DIR / rel).read_bytes()
        if hashlib.sha256(data).hexdigest() != digest:
            raise OfflineDocsError(f"{VENDOR_DIR / rel}: sha256 differs from {VENDOR_MANIFEST.name}")
        target = dest / rel
        if not target.is_file() or target.read_bytes() != data:
            write_bytes_atomic(target, data)
    shutil.copyfile(VENDOR_DIR / "README.md", dest / "README.md")


def rewrite(text: str, to_root: str) -> str:
    """``text`` (a page or stylesheet) with every CDN address it loads made local; ``to_root`` is the relative
    path from its folder to the site root, ending in ``/`` (``""`` at the root)."""
    for url in UNUSED_SCRIPTS:
        text = re.sub(r'[ \t]*<script src="' + re.escape(url) + r'"></script>\n?', "", text)
    for url, rel in vendor_manifest()["urls"].items():
        text = text.replace(f'"{url}"', f'"{to_root}{SITE_VENDOR}/{rel}"')
    text = _GX_IMAGE.sub(lambda m: f"{to_root}static/images/{GX_IMAGES[m.group(1)]}", text)
    return re.sub(r"<(?:script|link)\b[^>]*>", lambda m: _SRI.sub("", m.group(0)), text)


def remote_loads(text: str) -> list[str]:
    """The remote addresses a browser would fetch on opening ``text`` (empty for an offline page)."""
    return [m.group(0) for m in _REMOTE_LOAD.finditer(text)]


def make_offline(site: Path) -> list[Path]:
    """Make the GX site under ``site`` open offline (see the module docstring); return the rewritten files.

    Raises :class:`OfflineDocsError` naming the file if a page still loads a remote address or draws a chart.
    """
    site = Path(site)
    install_vendor(site)
    changed = []
    for path in sorted(p for p in site.rglob("*") if p.suffix in (".html", ".css") and p.is_file()):
        if site / SITE_VENDOR in path.parents:
            continue
        text = path.read_text(encoding="utf-8")
        to_root = Path(os.path.relpath(site, path.parent)).as_posix() + "/"
        new = rewrite(text, "" if to_root == "./" else to_root)
        if "vegaEmbed(" in new:
            raise OfflineDocsError(f"{path}: draws a Vega chart, and Vega is not vendored (docs_offline.UNUSED_SCRIPTS)")
        left = remote_loads(new)
        if left:
            raise OfflineDocsError(f"{path}: still loads {left[0]!r}; vendor it (simready/vendor/data_docs/README.md)")
        if new != text:
            write_bytes_atomic(path, new.encode("utf-8"))
            changed.append(path)
    return changed

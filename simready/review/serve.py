"""``python -m simready.review.serve``: the artifacts folder over HTTP for a browser, with byte ranges.

What ``make ui`` starts beside the Dagster UI, so that the asset pages' pictures load and the review pages'
videos play *and seek*: a browser asks for a video in pieces (``Range: bytes=a-b``) and moves its playhead
only when the server answers ``206 Partial Content``; Python's ``http.server`` ignores the header and sends
the whole file with ``200``, and the review clock's slider then leaves every video at 0:00.

Standard library only (``http.server`` with a handler that honours one byte range per request, RFC 9110 §14):
``bytes=a-b``, ``bytes=a-`` and ``bytes=-n``; a range past the end gets ``416`` with ``Content-Range: bytes
*/size``; several ranges in one request get the whole file (allowed: a server may ignore ``Range``).

The run writes the address it gave the asset pages' links (``SIMREADY_ARTIFACTS_URL``) into the artifacts
folder (:data:`simready.store.SERVED_AT_FILE`). Started without ``--port``, the server listens on that
address's port, so the links work; started on another port, it says in one line that the asset pages' links
point elsewhere (the review pages link relatively and work on any port).
"""

from __future__ import annotations

import argparse
import functools
import http.server
import os
import re
import sys
from io import BytesIO
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, cast
from urllib.parse import urlsplit

from simready.store import served_at

if TYPE_CHECKING:
    from _typeshed import SupportsRead, SupportsWrite
DEFAULT_PORT = 3001
HOST = "127.0.0.1"

_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")


def byte_range(header: str | None, size: int) -> tuple[int, int] | None | str:
    """The inclusive ``(first, last)`` byte range a ``Range`` header asks of a ``size``-byte file; None to send
    the whole file (no header, one the server may ignore: another unit, several ranges, malformed); ``"416"``
    when the range lies wholly past the end."""
    if not header:
        return None
    m = _RANGE.match(header.strip())
    if not m or (not m.group(1) and not m.group(2)):
        return None
    first, last = m.group(1), m.group(2)
    if not first:  # the last n bytes
        n = int(last)
        if n == 0:
            return "416"
        return max(0, size - n), size - 1
    a = int(first)
    b = min(int(last), size - 1) if last else size - 1
    if last and int(last) < a:
        return None
    if a >= size:
        return "416"
    return a, b


class RangeHandler(http.server.SimpleHTTPRequestHandler):
    """``SimpleHTTPRequestHandler`` that answers a byte range with 206 and says it accepts ranges."""

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass  # a reviewer's terminal is the Dagster UI's; failures still reach the browser

    def end_headers(self) -> None:
        self.send_header("Accept-Ranges", "bytes")
        super().end_headers()

    def send_head(self) -> BinaryIO | BytesIO | None:
        path = self.translate_path(self.path)
        if os.path.isdir(path) or "Range" not in self.headers:
            return super().send_head()
        try:
            f = open(path, "rb")  # noqa: SIM115 - returned to the base class, which closes it
        except OSError:
            self.send_error(404, "File not found")
            return None
        size = os.fstat(f.fileno()).st_size
        wanted = byte_range(self.headers.get("Range"), size)
        if wanted is None:
            f.close()
            return super().send_head()
        if wanted == "416":
            f.close()
            self.send_response(416)
            self.send_header("Content-Range", f"bytes */{size}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        first, last = cast("tuple[int, int]", wanted)  # not None, not "416"
        f.seek(first)
        self._remaining: int | None = last - first + 1
        self.send_response(206)
        self.send_header("Content-Type", self.guess_type(path))
        self.send_header("Content-Range", f"bytes {first}-{last}/{size}")
        self.send_header("Content-Length", str(self._remaining))
        self.send_header("Last-Modified", self.date_time_string(int(os.fstat(f.fileno()).st_mtime)))
        self.end_headers()
        return f

    def copyfile(self, source: SupportsRead[bytes], outputfile: SupportsWrite[bytes]) -> None:  # type: ignore[override]
        remaining = getattr(self, "_remaining", None)
        if remaining is None:
            return super().copyfile(source, outputfile)
        self._remaining = None
        while remaining > 0:
            chunk = source.read(min(64 * 1024, remaining))
            if not chunk:
                break
            outputfile.write(chunk)
            remaining -= len(chunk)


def make_server(folder: str | os.PathLike[str], port: int = 0, host: str = HOST) -> http.server.ThreadingHTTPServer:
    """A threading HTTP server over ``folder`` (not yet serving; ``port`` 0: a free one)."""
    handler = functools.partial(RangeHandler, directory=str(folder))
    return http.server.ThreadingHTTPServer((host, port), handler)


def port_of(url: str) -> int | None:
    """The port of an ``http://host:port`` URL (80 without one); None for anything else."""
    parts = urlsplit(url)
    if parts.scheme != "http":
        return None
    return parts.port or 80


def choose_port(folder: str | os.PathLike[str], port: int | None, env_url: str | None) -> tuple[int, str | None]:
    """``(port to serve on, warning or None)``: the port asked for, else the recorded run's, else the one
    ``SIMREADY_ARTIFACTS_URL`` names, else :data:`DEFAULT_PORT`; a one-line warning when the asset pages were
    written for another address than the one served."""
    recorded = served_at(Path(folder))
    recorded_port = port_of(recorded) if recorded else None
    env_port = port_of(env_url) if env_url else None
    chosen = port or recorded_port or env_port or DEFAULT_PORT
    if recorded and recorded_port != chosen:
        return chosen, (f"artifacts: the last run wrote the asset pages' links for {recorded}, but this serves "
                        f"http://{HOST}:{chosen}: pictures on the asset pages will not load (serve on port "
                        f"{recorded_port}, or run again); review pages link relatively and work")
    return chosen, None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m simready.review.serve",
        description="Serve the artifacts folder over HTTP with byte ranges (videos seek), on the port the last "
                    "run wrote its links for.")
    parser.add_argument("folder", nargs="?", default=os.environ.get("SIMREADY_ARTIFACTS", "artifacts"),
                        help="the artifacts folder (default: $SIMREADY_ARTIFACTS, else ./artifacts)")
    parser.add_argument("--port", type=int, default=None,
                        help="port (default: the last run's, else $SIMREADY_ARTIFACTS_URL's, else 3001)")
    parser.add_argument("--host", default=HOST, help=f"address to listen on (default {HOST})")
    args = parser.parse_args(argv)
    folder = Path(args.folder)
    if not folder.is_dir():
        print(f"error: artifacts folder {folder}: not a folder", file=sys.stderr)
        return 2
    port, warning = choose_port(folder, args.port, os.environ.get("SIMREADY_ARTIFACTS_URL"))
    if warning:
        print(warning, file=sys.stderr)
    try:
        server = make_server(folder, port, args.host)
    except OSError as exc:
        print(f"error: cannot listen on {args.host}:{port}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(f"artifacts: serving {folder} at http://{args.host}:{server.server_address[1]}", file=sys.stderr)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The artifacts server ``make ui`` starts (simready.review.serve): byte ranges, so review videos seek (issue 28)."""

from __future__ import annotations

import subprocess
import sys
import threading
import urllib.error
import urllib.request

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simready.review.serve import byte_range, choose_port, make_server
from simready.store import SERVED_AT_FILE, LocalStore, served_at


@pytest.fixture()
def served(tmp_path):
    (tmp_path / "clip.mp4").write_bytes(bytes(range(256)) * 40)  # 10 240 bytes
    server = make_server(tmp_path)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", (tmp_path / "clip.mp4").read_bytes()
    finally:
        server.shutdown()
        server.server_close()


def _get(url: str, range_: str | None = None):
    req = urllib.request.Request(url, headers={"Range": range_} if range_ else {})
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def test_a_range_request_gets_206_and_just_those_bytes(served):
    base, data = served
    status, headers, body = _get(f"{base}/clip.mp4")
    assert (status, body, headers["Accept-Ranges"]) == (200, data, "bytes")
    status, headers, body = _get(f"{base}/clip.mp4", "bytes=100-199")
    assert status == 206 and body == data[100:200]
    assert headers["Content-Range"] == f"bytes 100-199/{len(data)}" and headers["Content-Length"] == "100"
    assert headers["Content-Type"] == "video/mp4"
    assert _get(f"{base}/clip.mp4", "bytes=10000-")[2] == data[10000:]
    assert _get(f"{base}/clip.mp4", "bytes=-40")[2] == data[-40:]
    status, headers, _ = _get(f"{base}/clip.mp4", f"bytes={len(data)}-")
    assert status == 416 and headers["Content-Range"] == f"bytes */{len(data)}"
    assert _get(f"{base}/clip.mp4", "bytes=0-1,5-9")[:1] == (200,)  # several ranges: the whole file
    assert _get(f"{base}/missing.mp4", "bytes=0-1")[0] == 404


@given(size=st.integers(1, 10_000), a=st.integers(0, 12_000), b=st.integers(0, 12_000) | st.none())
def test_byte_range_stays_inside_the_file(size, a, b):
    got = byte_range(f"bytes={a}-{'' if b is None else b}", size)
    if a >= size and (b is None or b >= a):
        assert got == "416"
    elif b is not None and b < a:
        assert got is None
    else:
        first, last = got
        assert first == a and last == (size - 1 if b is None else min(b, size - 1))


def test_the_server_listens_where_the_run_wrote_its_links_and_warns_elsewhere(tmp_path):
    assert choose_port(tmp_path, None, None) == (3001, None)
    assert choose_port(tmp_path, None, "http://127.0.0.1:3005") == (3005, None)
    # A run writing links through the store records the address; the server then defaults to its port.
    store = LocalStore(tmp_path, "http://127.0.0.1:3007/")
    assert store.share_url("a/b.png") == "http://127.0.0.1:3007/a/b.png"
    assert served_at(tmp_path) == "http://127.0.0.1:3007" and store.list() == []  # hidden from the store
    assert (tmp_path / SERVED_AT_FILE).is_file()
    assert choose_port(tmp_path, None, "http://127.0.0.1:3001") == (3007, None)
    port, warning = choose_port(tmp_path, 3009, None)
    assert port == 3009 and "3007" in warning and "\n" not in warning


def test_serve_has_help_and_names_a_missing_folder(tmp_path):
    out = subprocess.run([sys.executable, "-m", "simready.review.serve", "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "--port" in out.stdout
    out = subprocess.run([sys.executable, "-m", "simready.review.serve", str(tmp_path / "none")],
                         capture_output=True, text=True)
    assert out.returncode == 2 and out.stderr.strip().splitlines() == [f"error: artifacts folder {tmp_path / 'none'}: not a folder"]

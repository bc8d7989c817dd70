"""Open an input file as a stream of bytes, transparently decompressing gzip.

gzip is recognised by its magic bytes, never by the file name. Small gzip files are
decompressed in-process; big ones by a child Python process (standard-library zlib),
so that decompression runs on another core while this process decodes JSON (msgspec
holds the GIL while it decodes, so a thread would not run alongside it).

Every problem with the file itself (missing, a directory, unreadable, truncated or
corrupt gzip) is a ``UserError`` naming the file.
"""
from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import zlib
from typing import Protocol

from generators.errors import UserError

GZIP_MAGIC = b"\x1f\x8b"
CHILD_THRESHOLD_BYTES = 8 << 20  # compressed size from which a child process decompresses
_READ = 1 << 20

# The child: decompress argv[1] (all gzip members) to stdout; one line on stderr and exit 3
# on a bad file. Kept to the standard library, run with -I -S so it starts in ~20 ms.
_CHILD = r"""
import queue, sys, threading, zlib
# A writer thread keeps the pipe full while this thread decompresses ahead (up to
# 16 x 4 MB): the parent reads in bursts, between decoding chunks.
q = queue.Queue(maxsize=16)
def write():
    out = sys.stdout.buffer
    try:
        while (block := q.get()) is not None:
            out.write(block)
        out.flush()
    except BrokenPipeError:
        pass
writer = threading.Thread(target=write)
writer.start()
def fail(msg):
    sys.stderr.write(msg); sys.stderr.flush(); q.put(None); writer.join(); sys.exit(3)
try:
    with open(sys.argv[1], "rb") as f:
        d, data = zlib.decompressobj(wbits=31), f.read(1 << 22)
        while True:
            q.put(d.decompress(data, 1 << 22)); data = d.unconsumed_tail
            if d.eof:
                rest = d.unused_data + data + f.read()
                if rest[:2] == b"\x1f\x8b":
                    d, data = zlib.decompressobj(wbits=31), rest; continue
                if rest.strip(b"\0"):
                    fail("data after the end of the gzip stream")
                break
            if not data:
                data = f.read(1 << 22)
                if not data:
                    fail("truncated gzip file: the compressed data ends early")
except zlib.error as exc:
    fail(f"corrupt gzip data ({exc})")
q.put(None)
writer.join()
"""

class Source(Protocol):
    def readinto(self, view: memoryview) -> int: ...
    def close(self) -> None: ...


def check_file(path: str) -> int:
    """The file's size; UserError if it is missing, not a regular file, or empty."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise UserError(path, "no such file") from None
    except OSError as exc:
        raise UserError(path, f"cannot read: {exc.strerror}") from None
    if os.path.isdir(path):
        raise UserError(path, "is a directory, not a file")
    if st.st_size == 0:
        raise UserError(path, "empty file")
    return st.st_size


class _Plain:
    def __init__(self, path: str):
        self.path, self.f = path, open(path, "rb")

    def readinto(self, view: memoryview) -> int:
        return self.f.readinto(view)

    def close(self) -> None:
        self.f.close()


class _InProcessGzip:
    def __init__(self, path: str):
        self.path, self.f = path, open(path, "rb")
        self.d, self.pending, self.data = zlib.decompressobj(wbits=31), b"", b""

    def _next(self) -> bytes:
        while True:
            if not self.data:
                self.data = self.f.read(_READ)
                if not self.data and not self.d.eof:
                    raise UserError(self.path, "truncated gzip file: the compressed data ends early")
            if self.d.eof:
                rest = self.d.unused_data + self.data
                if rest[:2] == GZIP_MAGIC:
                    self.d, self.data = zlib.decompressobj(wbits=31), rest
                    continue
                if rest.strip(b"\0") or self.f.read(1).strip(b"\0"):
                    raise UserError(self.path, "data after the end of the gzip stream")
                return b""
            try:
                out = self.d.decompress(self.data, _READ * 8)
            except zlib.error as exc:
                raise UserError(self.path, f"corrupt gzip data ({exc})") from None
            self.data = self.d.unconsumed_tail
            if out:
                return out

    def readinto(self, view: memoryview) -> int:
        if not self.pending:
            self.pending = self._next()
        n = min(len(view), len(self.pending))
        view[:n] = self.pending[:n]
        self.pending = self.pending[n:]
        return n

    def close(self) -> None:
        self.f.close()


class _ChildGzip:
    def __init__(self, path: str):
        self.path = path
        self.proc = subprocess.Popen([sys.executable, "-I", "-S", "-c", _CHILD, path],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:  # fewer, larger pipe transfers (Linux; 1 MiB is the unprivileged maximum)
            fcntl.fcntl(self.proc.stdout.fileno(), fcntl.F_SETPIPE_SZ, 1 << 20)
        except (AttributeError, OSError):
            pass

    def readinto(self, view: memoryview) -> int:
        n = self.proc.stdout.readinto(view)
        if n == 0:
            err = self.proc.stderr.read().decode("utf-8", "replace").strip()
            if self.proc.wait() != 0:
                raise UserError(self.path, err or f"gzip decompression failed ({self.proc.returncode})")
        return n

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.proc.stdout.close()
        self.proc.stderr.close()


def open_source(path: str | os.PathLike[str], child_threshold: int | None = None) -> Source:
    """The file's content as a Source (decompressed if it is gzip). Close it after use.
    gzip files of ``child_threshold`` bytes or more (default ``CHILD_THRESHOLD_BYTES``)
    are decompressed by a child process."""
    path = os.fspath(path)
    if child_threshold is None:
        child_threshold = CHILD_THRESHOLD_BYTES
    size = check_file(path)
    try:
        with open(path, "rb") as f:
            magic = f.read(2)
    except OSError as exc:
        raise UserError(path, f"cannot read: {exc.strerror}") from None
    if magic != GZIP_MAGIC:
        return _Plain(path)
    return _ChildGzip(path) if size >= child_threshold else _InProcessGzip(path)


def read_all(path: str | os.PathLike[str]) -> bytes:
    """The whole (decompressed) content."""
    src = open_source(path)
    parts = []
    try:
        buf = bytearray(1 << 23)
        with memoryview(buf) as view:
            while n := src.readinto(view):
                parts.append(bytes(view[:n]))
    finally:
        src.close()
    return b"".join(parts)


def peek(path: str | os.PathLike[str], n: int = 1 << 16) -> bytes:
    """The first n bytes of the (decompressed) content; fewer if the file is shorter."""
    src = _InProcessGzip(os.fspath(path)) if is_gzip(path) else _Plain(os.fspath(path))
    buf = bytearray(n)
    got = 0
    try:
        with memoryview(buf) as view:
            while got < n and (k := src.readinto(view[got:])):
                got += k
    except UserError as exc:
        if "truncated" not in exc.message:  # a short prefix of a truncated file is fine
            raise
    finally:
        src.close()
    return bytes(buf[:got])


def is_gzip(path: str | os.PathLike[str]) -> bool:
    check_file(os.fspath(path))
    with open(path, "rb") as f:
        return f.read(2) == GZIP_MAGIC

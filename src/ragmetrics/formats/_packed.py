"""Doc ids kept as bytes: a fixed-width ``S`` array (ASCII, zero-padded) instead of strings.

Runs and qrels read from plain TREC files keep their doc ids this way: ten million Python
strings cost more to make and to hash than the whole evaluation. Ids are compared through
64-bit hashes of their bytes; a hash never decides alone: every pair it matches is checked
byte for byte.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import chain

import numpy as np

from ragmetrics._util.threads import map_threaded

_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)
_MIX = np.uint64(0xBF58476D1CE4E5B9)
_MAX_WORDS = 32  # ids up to 256 bytes are cut from a joined buffer; longer ones one by one
WIDEST = 8 * _MAX_WORDS


def too_wide(count: int, width: int, total: int) -> bool:
    """True when ``count`` ids of ``total`` bytes, the widest ``width``, are better kept as
    strings than padded to that width: wider than ``WIDEST`` and not all of one width.
    Padded, every id costs the widest one's bytes, in memory and in every hash and
    comparison: one id of 2,000 bytes among 500,000 short ones took 4 GB, and chunk texts of
    200 to 2,000 bytes used as ids read and evaluated five times slower than as strings. Ids
    of one width, however wide, pad to nothing and stay bytes."""
    return width > WIDEST and count * width > total


# the first j bytes of a little-endian 8-byte word, for j = 0..8
LOW_BYTES = np.array([(1 << (8 * j)) - 1 for j in range(9)], dtype="<u8")  # keep bytes 0..j-1


def equal(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """``left == right``, id by id, for two ``S`` arrays of ids of one length: where both
    have one width, compared as whole 8-, 4- or 2-byte words (ids hold no NUL, so equal
    bytes are equal ids; the comparison three times as fast as numpy's for UUIDs)."""
    width = left.dtype.itemsize
    if right.dtype.itemsize != width or not len(left):
        return np.asarray(left == right)
    for size in (8, 4, 2):
        if width % size == 0:
            words = width // size
            a = np.ascontiguousarray(left).view(f"<u{size}").reshape(len(left), words)
            b = np.ascontiguousarray(right).view(f"<u{size}").reshape(len(right), words)
            same: np.ndarray = (a == b).all(axis=1) if words > 1 else (a == b).ravel()
            return same
    return np.asarray(left == right)


def n_words(*arrays: np.ndarray) -> int:
    """How many 8-byte words hold the widest id of ``arrays`` (at least one)."""
    return max(1, -(-max(a.dtype.itemsize for a in arrays) // 8))


def hashes(ids: np.ndarray, words: int) -> np.ndarray:
    """A 64-bit hash of each id, read as ``words`` 8-byte words (equal ids, equal hashes,
    whatever the width of the array they come from)."""
    if len(ids) <= _HASH_CHUNK:
        return _hashes(ids, words)
    # a chunk at a time: its temporaries stay in the processor's cache (twice as fast); the
    # chunks side by side on threads (numpy lets go of the interpreter)
    hashed = np.empty(len(ids), dtype=np.uint64)

    def chunk(start: int) -> None:
        stop = start + _HASH_CHUNK
        hashed[start:stop] = _hashes(ids[start:stop], words)

    map_threaded(chunk, range(0, len(ids), _HASH_CHUNK))
    return hashed


_HASH_CHUNK = 1 << 16


def _hashes(ids: np.ndarray, words: int) -> np.ndarray:
    columns = _words(ids, words, "<u8")
    value = columns[:, 0] * _MULTIPLIER
    for column in range(1, words):
        value ^= columns[:, column]
        value *= _MULTIPLIER
    shifted = value >> np.uint64(31)
    value ^= shifted
    value *= _MIX
    np.right_shift(value, np.uint64(29), out=shifted)
    value ^= shifted
    return value


def spread_hashes(ids: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each id (an ``S`` array) that does not depend on the array's width:
    the id's 8-byte words, each times its own odd weight, summed (the zero words of the
    padding add nothing), then mixed. For spreading rows over parts, where one query's
    ids come from arrays of many widths: equal ids, equal hashes."""
    words = word_matrix(ids)
    weights = (2 * np.arange(words.shape[1], dtype=np.uint64) + np.uint64(1)) * _MULTIPLIER
    value: np.ndarray = (words * weights).sum(axis=1, dtype=np.uint64)  # modulo 2**64
    value ^= value >> np.uint64(31)
    value *= _MIX
    value ^= value >> np.uint64(29)
    return value


def sort_words(ids: np.ndarray) -> np.ndarray:
    """``ids`` (an ``S`` array) as rows of 8-byte words read big-endian (then held as native
    integers), zero-padded: comparing rows word by word, as integers, orders them as their
    bytes (a shorter id, padded with zeros, sorts before the longer ones it begins)."""
    big = _words(ids, n_words(ids), ">u8")
    native: np.ndarray = big.astype(np.uint64)  # numpy sorts swapped bytes several times slower
    return native


def word_matrix(ids: np.ndarray) -> np.ndarray:
    """``ids`` (an ``S`` array) as rows of little-endian 8-byte words, as many as the widest
    id needs, zero-padded (a view when the width is already whole words)."""
    return _words(np.ascontiguousarray(ids), n_words(ids), "<u8")


def _words(ids: np.ndarray, words: int, dtype: str) -> np.ndarray:
    """``ids`` (an ``S`` array) as rows of ``words`` 8-byte words of ``dtype``, zero-padded
    (a view when the width is already whole words)."""
    width = ids.dtype.itemsize
    if width == words * 8:
        return ids.view(dtype).reshape(len(ids), words)
    matrix = np.zeros((len(ids), words * 8), dtype=np.uint8)
    matrix[:, :width] = ids.view(np.uint8).reshape(len(ids), width)
    return matrix.view(dtype)


def encode(groups: Sequence[Iterable[str]], count: int) -> np.ndarray | None:
    """The ``count`` ids of ``groups`` (strings in sequences or dict keys, group after group,
    flat) as an ``S`` array of their UTF-8 bytes, or None when one holds a NUL (the zero
    padding would hide it) or a lone surrogate, or when they are :func:`too_wide`. Ids of
    one width (UUIDs) are cut as rows of a matrix; others at the newlines that join them
    (ids holding a newline one by one)."""
    if not count:
        return np.zeros(0, dtype="S8")
    try:  # each group joined on its own: no list of every id is made
        data = "\n".join(map("\n".join, filter(None, groups))).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        return None
    if b"\x00" in data:
        return None  # the zero padding would hide it
    newlines = data.count(b"\n")
    if newlines != count - 1:  # an id with a newline in it
        return _one_by_one(groups)
    width = data.find(b"\n") if count > 1 else len(data)
    if len(data) + 1 == count * (width + 1) and width:
        # every id may be one width: then each newline ends a row of the matrix
        matrix = np.frombuffer(data + b"\n", dtype=np.uint8).reshape(count, width + 1)
        if (matrix[:, width] == ord("\n")).all():
            return matrix[:, :width].copy().view(f"S{width}").ravel()
    # cut the joined bytes at the newlines (room for whole words past the last id)
    buffer = np.zeros(len(data) + 1 + 8 * _MAX_WORDS, dtype=np.uint8)
    buffer[: len(data)] = np.frombuffer(data, dtype=np.uint8)
    buffer[len(data)] = ord("\n")
    ends = np.flatnonzero(buffer[: len(data) + 1] == ord("\n"))
    starts = np.concatenate(([0], ends[:-1] + 1))
    widths = ends - starts
    if too_wide(count, int(widths.max()), int(widths.sum())):
        return None  # past WIDEST, ids of one width took the matrix above
    rows = word_rows(buffer, starts, widths)
    return rows.view(f"S{rows.shape[1]}").ravel()


def _one_by_one(groups: Sequence[Iterable[str]]) -> np.ndarray | None:
    """:func:`encode`'s answer, each id encoded on its own (None for ids :func:`too_wide`)."""
    encoded = [i.encode("utf-8") for i in chain.from_iterable(groups)]
    lengths = list(map(len, encoded))
    if too_wide(len(encoded), max(lengths, default=0), sum(lengths)):
        return None
    return np.array(encoded, dtype=np.bytes_)


# printable ASCII but the space (0x21..0x7e), and the zero that pads ids
_PRINTABLE_OR_ZERO = bytes(range(0x21, 0x7F)) + b"\x00"


def word_rows(buffer: np.ndarray, starts: np.ndarray, widths: np.ndarray) -> np.ndarray:
    """The ``widths[i]`` bytes of ``buffer`` from each ``starts[i]``, as rows of whole 8-byte
    words (uint8, zero past each field; at least one word). ``buffer`` must hold that many
    words from every start."""
    widest = int(widths.max()) if len(widths) else 0
    n_words = max(1, -(-widest // 8))
    # each row copied whole, as one item of a void type (a third of the time a row of bytes
    # or a gather word by word takes), then the bytes past each field cleared
    windows = np.ndarray(
        (len(buffer) - 8 * n_words + 1,), dtype=f"V{8 * n_words}", buffer=buffer, strides=(1,)
    )
    rows: np.ndarray = windows[starts].view(np.uint8).reshape(len(starts), 8 * n_words)
    words = rows.view("<u8")
    if len(widths) and int(widths.min()) == widest:  # one width (UUIDs): its last word only
        if widest % 8 or not widest:
            words[:, -1] &= LOW_BYTES[widest % 8]
    else:
        for k in range(n_words):
            words[:, k] &= LOW_BYTES[np.clip(widths - 8 * k, 0, 8)]
    return rows


def word_view(buffer: np.ndarray) -> np.ndarray:
    """Every byte offset of ``buffer`` (uint8) seen as the start of a little-endian 8-byte
    word (byte k of a word is the k-th byte from its offset)."""
    return np.ndarray((len(buffer) - 7,), dtype="<u8", buffer=buffer, strides=(1,))


def words_of(ids: list[str]) -> np.ndarray | None:
    """``ids`` as an ``S`` array of whole 8-byte words (zero-padded), which :func:`decode`
    gives back as they are (their UTF-8 bytes); None when one is empty, or holds a NUL or a
    newline."""
    if not ids or not all(ids) or "\n".join(ids).count("\n") != len(ids) - 1:
        return None
    encoded = encode([ids], len(ids))
    return None if encoded is None else as_words(encoded)


def as_words(ids: np.ndarray) -> np.ndarray:
    """``ids`` (an ``S`` array) at a width of whole 8-byte words (itself when it is one)."""
    if ids.dtype.itemsize % 8 == 0:
        return ids
    words = n_words(ids)
    return _words(ids, words, "u1").view(f"S{8 * words}").ravel()


def printable_utf8(data: np.ndarray) -> bool:
    """True when the bytes beyond ASCII of ``data`` (uint8; its ASCII bytes are looked at
    by the caller) are UTF-8 of printable characters: none is whitespace, a control or
    format character (U+00A0, U+200B, U+FEFF, ...), unassigned or private, as the line rule
    of TREC files requires. Ids of such bytes compare and sort as the strings do."""
    text = _beyond_ascii(data)
    return text is not None and text.replace("\x00", "").isprintable()


def utf8(data: np.ndarray) -> bool:
    """True when the bytes beyond ASCII of ``data`` (uint8) are UTF-8, of any characters."""
    return _beyond_ascii(data) is not None


def _beyond_ascii(data: np.ndarray) -> str | None:
    """The runs of bytes beyond ASCII of ``data`` decoded as UTF-8, a zero between two runs
    (a character cut at a run's end is not mended by the next run), or None where they are
    not UTF-8. A character of more than one byte holds no ASCII byte, so this checks the
    whole of ``data``."""
    high = np.flatnonzero(data >= 0x80)
    runs = np.insert(data[high], np.flatnonzero(np.diff(high) != 1) + 1, 0)
    try:
        text: str = runs.tobytes().decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text


def decode(ids: np.ndarray) -> list[str]:
    """The ids as strings. No packed id holds a NUL (every path that packs ids makes sure),
    so each ends at its padding's first zero; ids of printable ASCII without the space (TREC
    files', MS MARCO's, UUIDs) are split apart at whitespace, the fastest way, and any other
    at the zeros."""
    if not len(ids):
        return []
    width = ids.dtype.itemsize
    rows = np.zeros((len(ids), width + 1), dtype=np.uint8)  # a zero after every id, at least
    rows[:, :width] = ids.view(np.uint8).reshape(len(ids), width)
    raw = rows.tobytes()
    if raw.isascii() and not raw.translate(None, _PRINTABLE_OR_ZERO):
        return raw.replace(b"\x00", b" ").decode("ascii").split()
    return list(filter(None, raw.decode("utf-8").split("\x00")))

"""Doc ids kept as bytes: a fixed-width ``S`` array (ASCII, zero-padded) instead of strings.

Runs and qrels read from plain TREC files keep their doc ids this way: ten million Python
strings cost more to make and to hash than the whole evaluation. Ids are compared through
64-bit hashes of their bytes; a hash never decides alone: every pair it matches is checked
byte for byte.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import chain

import numpy as np

from ragmetrics._util.threads import map_threaded
from ragmetrics.errors import RagMetricsError

_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)
_MIX = np.uint64(0xBF58476D1CE4E5B9)
WIDEST = 256  # ids up to this many bytes may be packed as they are; longer ones stand in


# --- stand-ins: ids far wider than the others ------------------------------------------------
#
# Ids are packed at the width of the widest: one id of 300 bytes among millions of short ones
# would widen them all (past WIDEST, it sent the whole run to Python strings). Instead such an
# id is packed as a stand-in of STANDIN_WIDTH bytes: its first _PREFIX bytes, a NUL (which no
# packed id holds, so a stand-in never looks like one), and 8 bytes of a BLAKE2b hash of the
# whole id whose last byte is never zero (so the stand-in's bytes end there). Every id past
# WIDEST stands in (or its array is kept as strings, :func:`few_long`); an id of up to
# WIDEST bytes stands in where it is far wider than the others of its array and such ids are
# few (:func:`standin_cut`), and is packed as its bytes elsewhere. The id itself is kept in
# _LONG, which every decode consults; an id whose stand-in another id holds is not packed.
# What compares ids across arrays takes a stand-in as its id: :func:`hashes` gives it the
# id's hash, :func:`equal` compares such pairs as strings; and, as a stand-in's bytes do not
# sort as its id, what orders docs by id compares them as strings (:func:`greater`,
# :func:`sortable`).

STANDIN_WIDTH = 16
_PREFIX = 7  # the id's first bytes in its stand-in, then a NUL, then 8 bytes of hash
_LONG: dict[bytes, str] = {}  # each stand-in made or received in this process: its id
_MAX_LONG = 1 << 16  # ids kept at most (20 MB of ids of 300 bytes); then strings
_OUTLIER = 4  # an id this many times as wide as the mean may stand in, where few are
_FEW_OUTLIERS = 64  # at most one id in this many (any 16): a stand-in costs a hash in Python


def few_long(count: int, n_long: int) -> bool:
    """True when ``n_long`` ids longer than ``WIDEST`` among ``count`` are better packed as
    stand-ins than the whole array kept as strings: up to an eighth of them (any 16), and
    room for them among the ids this process keeps. More (chunk texts used as ids, 200 to
    2,000 bytes each) stay strings, as before stand-ins: padded to the widest, they read
    and evaluated five times slower than as strings, and kept here they would stay for the
    life of the process."""
    return 8 * n_long <= max(count, 128) and len(_LONG) < _MAX_LONG


def outlier_width(total: int, count: int) -> int:
    """Ids wider than this (of ``count`` ids of ``total`` bytes) are far wider than the
    others: :data:`_OUTLIER` times their mean width, and wider than a stand-in."""
    return max(STANDIN_WIDTH, _OUTLIER * -(-total // max(count, 1)))


def standin_cut(count: int, widest: int, outliers: int, n_over: Callable[[int], int]) -> int | None:
    """The width past which the ids of an array (``count`` ids, the widest ``widest``
    bytes; ``n_over(w)``: how many are wider than ``w``) are packed as stand-ins: ``WIDEST``
    (past it every id stands in), or ``outliers`` (:func:`outlier_width`) when at most one
    id in :data:`_FEW_OUTLIERS` (any 16) is wider, so that one URL among short ids does not
    widen them all (more such ids are padded, as an array of wide ids should be). None
    when the ids past ``WIDEST`` are not :func:`few_long`: the array is kept as strings."""
    if widest <= min(outliers, WIDEST):
        return WIDEST
    n_long = n_over(WIDEST) if widest > WIDEST else 0
    if n_long and not few_long(count, n_long):
        return None
    if outliers < WIDEST:
        n_wide = n_over(outliers)
        if _FEW_OUTLIERS * n_wide <= max(count, 16 * _FEW_OUTLIERS) and len(_LONG) < _MAX_LONG:
            return outliers
    return WIDEST


def cut_of(widths: np.ndarray) -> int | None:
    """:func:`standin_cut` of an array whose ids are ``widths`` bytes wide (at least one)."""

    def over(limit: int) -> int:
        return int(np.count_nonzero(widths > limit))

    outliers = outlier_width(int(widths.sum()), len(widths))
    return standin_cut(len(widths), int(widths.max()), outliers, over)


def rows_with_standins(
    buffer: np.ndarray, starts: np.ndarray, widths: np.ndarray, cut: int | None = None
) -> np.ndarray | None:
    """:func:`word_rows`, each id wider than ``cut`` as its stand-in (``cut`` chosen from
    ``widths`` by :func:`standin_cut` unless given); None when the ids are to be kept as
    strings or cannot stand in (see :func:`standins`). ``buffer`` must hold ``WIDEST``
    bytes past its last id."""
    if not len(widths):
        return word_rows(buffer, starts, widths)
    if cut is None:
        cut = cut_of(widths)
        if cut is None:
            return None
    if int(widths.max()) <= cut:
        return word_rows(buffer, starts, widths)
    long = np.flatnonzero(widths > cut)
    made = standins(
        [
            buffer[start : start + width].tobytes()
            for start, width in zip(starts[long].tolist(), widths[long].tolist(), strict=True)
        ]
    )
    if made is None:
        return None
    widths = widths.copy()
    widths[long] = STANDIN_WIDTH  # the id's first bytes, each row then written over
    rows = word_rows(buffer, starts, widths)
    rows[long, :STANDIN_WIDTH] = made.view(np.uint8).reshape(len(long), STANDIN_WIDTH)
    return rows


def standins(ids: Sequence[bytes]) -> np.ndarray | None:
    """The stand-ins of ``ids`` (each wider than ``STANDIN_WIDTH``, UTF-8 without a NUL) as
    an ``S`` array of ``STANDIN_WIDTH`` bytes, each id kept to be decoded; None when one is
    not UTF-8 or holds a NUL, two ids would share a stand-in (then no stand-in serves), or
    this process keeps as many ids as it may (:data:`_MAX_LONG`). An id repeated is hashed
    once."""
    made: dict[bytes, bytes] = {}
    for raw in ids:
        if raw in made:
            continue
        if b"\x00" in raw:
            return None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return None
        digest = hashlib.blake2b(raw, digest_size=8).digest()
        standin = raw[:_PREFIX] + b"\x00" + digest[:7] + bytes((digest[7] | 0x80,))
        if standin not in _LONG and len(_LONG) >= _MAX_LONG:
            return None
        if _LONG.setdefault(standin, text) != text:  # one step: parsing threads share it
            return None
        made[raw] = standin
    return np.array(list(map(made.__getitem__, ids)), dtype=f"S{STANDIN_WIDTH}")


def standin_rows(ids: np.ndarray) -> np.ndarray:
    """Where ``ids`` (an ``S`` array) holds stand-ins, ascending (none, at once, while this
    process has made none or the ids are narrower than one)."""
    width = ids.dtype.itemsize
    if not _LONG or width < STANDIN_WIDTH or not len(ids):
        return np.zeros(0, dtype=np.int64)
    raw = np.ascontiguousarray(ids).view(np.uint8).reshape(len(ids), width)
    return np.flatnonzero((raw[:, _PREFIX] == 0) & (raw[:, STANDIN_WIDTH - 1] != 0))


def long_ids(ids: np.ndarray) -> dict[bytes, str]:
    """The ids behind the stand-ins among ``ids``: what a process that receives the array
    must :func:`keep` to decode it."""
    where = standin_rows(ids)
    return {key: _LONG[key] for key in set(ids[where].tolist())} if len(where) else {}


def keep(received: Mapping[bytes, str]) -> None:
    """Keep stand-ins made in another process (:func:`long_ids`) to decode them here."""
    for standin, text in received.items():
        if _LONG.setdefault(standin, text) != text:
            raise RagMetricsError(
                f"Two long doc ids share a hash: {text[:60]!r}... and "
                f"{_LONG[standin][:60]!r}...; no result is given rather than one that may "
                f"confuse them. Evaluate in one process (workers=1), or shorten the ids."
            )


def _decoded_standins(ids: np.ndarray, where: np.ndarray) -> list[str]:
    """:func:`decode` of ids holding stand-ins (at ``where``): each stand-in's id, the
    others as they are."""
    keep_rows = np.ones(len(ids), dtype=bool)
    keep_rows[where] = False
    others = decode(ids[keep_rows])
    out: list[str] = []
    start = 0
    for i, (row, standin) in enumerate(zip(where.tolist(), ids[where].tolist(), strict=True)):
        stop = row - i  # the other ids before this one
        out.extend(others[start:stop])
        out.append(_LONG[standin])
        start = stop
    out.extend(others[start:])
    return out


# the first j bytes of a little-endian 8-byte word, for j = 0..8
LOW_BYTES = np.array([(1 << (8 * j)) - 1 for j in range(9)], dtype="<u8")  # keep bytes 0..j-1


def equal(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """``left == right``, id by id, for two ``S`` arrays of ids of one length: where both
    have one width, compared as whole 8-, 4- or 2-byte words (ids hold no NUL, so equal
    bytes are equal ids; the comparison three times as fast as numpy's for UUIDs). A pair
    that holds a stand-in is compared as the ids' strings (one id may stand in in one array
    and not in another)."""
    same = _equal_bytes(left, right)
    if _LONG and len(left):
        where = np.union1d(standin_rows(left), standin_rows(right))
        if len(where):
            same = np.array(same, dtype=bool)
            pairs = zip(decode(left[where]), decode(right[where]), strict=True)
            same[where] = [a == b for a, b in pairs]
    return same


def greater(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """``left > right``, id by id, for two ``S`` arrays of ids of one length, in the strings'
    order: UTF-8 bytes sort as their strings, but a stand-in's bytes do not, so a pair that
    holds one is compared as the ids' strings."""
    bigger: np.ndarray = np.asarray(left > right)
    if _LONG and len(left):
        where = np.union1d(standin_rows(left), standin_rows(right))
        if len(where):
            pairs = zip(decode(left[where]), decode(right[where]), strict=True)
            bigger[where] = [a > b for a, b in pairs]
    return bigger


def sortable(ids: np.ndarray) -> np.ndarray:
    """``ids`` (an ``S`` array of any shape) as an array that sorts as their strings do:
    itself, or, where a stand-in is among them, their strings (an object array)."""
    where = standin_rows(ids.ravel())
    if not len(where):
        return ids
    strings = np.empty(ids.size, dtype=object)
    strings[:] = decode(ids.ravel())
    return strings.reshape(ids.shape)


def _equal_bytes(left: np.ndarray, right: np.ndarray) -> np.ndarray:
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
    whatever the width of the array they come from). A stand-in's hash is its id's, read
    as ``words`` words or as many as the id needs: where the id is not a stand-in, its
    array is that wide, so ``words`` is at least that many (ids of both sides are hashed
    at the width of the widest of either)."""
    if len(ids) <= _HASH_CHUNK:
        hashed = _hashes(ids, words)
    else:
        # a chunk at a time: its temporaries stay in the processor's cache (twice as fast);
        # the chunks side by side on threads (numpy lets go of the interpreter)
        hashed = np.empty(len(ids), dtype=np.uint64)

        def chunk(start: int) -> None:
            stop = start + _HASH_CHUNK
            hashed[start:stop] = _hashes(ids[start:stop], words)

        map_threaded(chunk, range(0, len(ids), _HASH_CHUNK))
    where = standin_rows(ids)
    if len(where):  # each id's own bytes, once, hashed together where they need as many words
        distinct, each = np.unique(ids[where], return_inverse=True)
        raws = [_LONG[standin].encode("utf-8") for standin in distinct.tolist()]
        lengths = np.fromiter(map(len, raws), dtype=np.int64, count=len(raws))
        needed = np.maximum(words, -(-lengths // 8))
        own = np.empty(len(raws), dtype=np.uint64)
        for n in np.unique(needed).tolist():
            picked = np.flatnonzero(needed == n)
            group = np.array([raws[i] for i in picked.tolist()], dtype=f"S{8 * n}")
            own[picked] = _hashes(group, n)
        hashed[where] = own[each.ravel()]
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
    padding would hide it) or a lone surrogate, or when too many are longer than ``WIDEST``
    to stand in (:func:`few_long`). Ids of one width (UUIDs) are cut as rows of a matrix;
    others at the newlines that join them (ids holding a newline one by one)."""
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
    if len(data) + 1 == count * (width + 1) and 0 < width <= WIDEST:
        # every id may be one width: then each newline ends a row of the matrix
        matrix = np.frombuffer(data + b"\n", dtype=np.uint8).reshape(count, width + 1)
        if (matrix[:, width] == ord("\n")).all():
            return matrix[:, :width].copy().view(f"S{width}").ravel()
    # cut the joined bytes at the newlines (room for the widest id's words past the last)
    buffer = np.zeros(len(data) + 1 + WIDEST, dtype=np.uint8)
    buffer[: len(data)] = np.frombuffer(data, dtype=np.uint8)
    buffer[len(data)] = ord("\n")
    ends = np.flatnonzero(buffer[: len(data) + 1] == ord("\n"))
    starts = np.concatenate(([0], ends[:-1] + 1))
    rows = rows_with_standins(buffer, starts, ends - starts)
    return None if rows is None else rows.view(f"S{rows.shape[1]}").ravel()


def _one_by_one(groups: Sequence[Iterable[str]]) -> np.ndarray | None:
    """:func:`encode`'s answer, each id encoded on its own (the ids :func:`standin_cut`
    names as stand-ins, or None, as there)."""
    encoded = [i.encode("utf-8") for i in chain.from_iterable(groups)]
    widths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    cut = cut_of(widths) if len(widths) else WIDEST
    if cut is None:
        return None
    long = np.flatnonzero(widths > cut).tolist()
    made = standins([encoded[at] for at in long]) if long else None
    if long and made is None:
        return None
    for at, standin in zip(long, [] if made is None else made.tolist(), strict=True):
        encoded[at] = standin
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
    where = standin_rows(ids)
    if len(where):
        return _decoded_standins(ids, where)
    width = ids.dtype.itemsize
    rows = np.zeros((len(ids), width + 1), dtype=np.uint8)  # a zero after every id, at least
    rows[:, :width] = ids.view(np.uint8).reshape(len(ids), width)
    raw = rows.tobytes()
    if raw.isascii() and not raw.translate(None, _PRINTABLE_OR_ZERO):
        return raw.replace(b"\x00", b" ").decode("ascii").split()
    return list(filter(None, raw.decode("utf-8").split("\x00")))

"""Catalogues as data: the published code and message tables of NVIDIA and Kubernetes, one entry
per code, each citing where the catalogue comes from.

The diagnosis table (`table_*.py`) holds rows researched one failure at a time. A catalogue holds
a whole family instead (every Xid, every CUDA error, every NVML return code, ...), so text nobody
here has seen is still explained when it prints a code or a message the vendor documents. A
catalogue finds its entries in a line in one of two ways:

- **readers**: regexes with a group `code` that read a code or a name out of a line
  (`Xid (PCI:0000:3b:00): 79, ...` reads `79`; `CUDA error: system not yet initialized` reads the
  message); the code is then looked up among the entries' `code` and `aliases`, case-insensitively;
- **texts**: an entry's `texts` are fixed message texts, as the component prints them (from its
  source code or documentation), found anywhere in the line, case-insensitively.

The diagnosis id of an entry is `<catalogue>.<code>` (`xid.79`, `cuda.802`): one id per entry,
whatever spelling of it the line carried.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TypeAlias

from gpuctl.diagnose.literals import may_match, required_literals

# Which layer's fault explains the others' when one log shows several: a lower rank is nearer the
# root. NVIDIA's Xid catalogue recommends acting on the fabric and the GPU's own faults first (an
# NVLink or NVSwitch error makes the applications on it fail with their own Xids, CUDA and NCCL
# errors); a lost or fallen GPU fails every program using it ("unknown error" in CUDA, NCCL's
# unhandled cuda error); a driver or toolkit fault stops containers before any program runs; the
# network and the workload's own errors come last.
# Sources: https://docs.nvidia.com/deploy/xid-errors/ (Xid catalogue, "Recommended actions" and the
# per-Xid "Xid 79 ... triggered by ... Xid 74" notes), https://docs.nvidia.com/datacenter/tesla/
# fabric-manager-user-guide/ (CUDA 802 while Fabric Manager is not running).
LAYER_RANK: dict[str, int] = {
    "fabric": 10,  # NVSwitch (SXid), Fabric Manager, NVLink domain
    "hardware": 20,  # the GPU lost, fallen off the bus, power, thermal, PCIe
    "nvlink": 30,
    "memory": 40,  # ECC, row remapping, page retirement
    # Another kernel driver (nouveau, nova_core, vfio-pci) holds the GPU: the NVIDIA module's
    # probe and load errors and the installer's "Unable to load the kernel module" follow from it.
    "driver-conflict": 45,
    # The MPS server a shared GPU's CUDA clients go through (the driver's nvidia-cuda-mps-server):
    # when it dies, every client fails with the driver's unknown error (999) or an MPS error, so
    # it comes before them. Source: https://docs.nvidia.com/deploy/mps/index.html
    "mps": 45,
    "driver": 50,
    "toolkit": 60,
    "runtime": 60,
    "plugin": 70,
    "mig": 70,
    "packages": 70,
    "config": 75,
    "network": 80,  # NCCL's NET/IB and sockets
    # A component waiting for another to be ready (a ComputeDomain waiting for its IMEX daemons):
    # whatever failure the other one prints explains the wait, so the wait comes after it.
    "wait": 88,
    "application": 90,  # the program's own fault (illegal address, out of memory)
    # A warning the component prints on a run that goes on (NCCL's topology search falling back
    # to a slower order): it never explains an error printed after it, so it comes after any.
    "advisory": 95,
}
DEFAULT_RANK = 85  # a layer not in LAYER_RANK


@dataclass(frozen=True)
class Entry:
    """One code or message of a catalogue: what it means, on which layer, and what to do.

    `cause` and `fix` may use `{node}` and the catalogue readers' named groups (e.g. `{gpu}`).
    `source` overrides the catalogue's citation where the entry comes from elsewhere.
    """

    code: str
    name: str
    cause: str
    fix: str
    layer: str
    aliases: tuple[str, ...] = ()
    texts: tuple[str, ...] = ()
    source: str = ""
    transient: bool = False
    # Its text is an operating-system error string ("No space left on device") that any tool
    # prints as the detail of its own message: on a line where another entry is found, that
    # entry names what was full or refused, and this one stands back.
    detail: bool = False

    @property
    def rank(self) -> int:
        return LAYER_RANK.get(self.layer, DEFAULT_RANK)


@dataclass(frozen=True)
class Catalogue:
    """A published table of codes or messages.

    `applies_to` names the sources gpuctl verify reads (kernel, nvidia-smi, cuda-workload, ...; see
    diagnose/doc.py SOURCES) where the catalogue's codes are looked for; `gpuctl explain` looks for
    every catalogue in every text. `unknown` is what a code the readers read but no entry lists
    means (a newer driver's Xid): its `code` is ignored, the code read is put in `{code}`.
    """

    id: str
    title: str
    source: str
    version: str
    entries: tuple[Entry, ...]
    applies_to: tuple[str, ...]
    readers: tuple[str, ...] = ()
    unknown: Entry | None = None
    _compiled: tuple[re.Pattern[str], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        compiled = tuple(re.compile(reader, re.IGNORECASE) for reader in self.readers)
        for reader in compiled:
            if "code" not in reader.groupindex:
                raise ValueError(f"catalogue {self.id}: reader {reader.pattern!r} has no group `code`")
        object.__setattr__(self, "_compiled", compiled)

    @cached_property
    def by_key(self) -> dict[str, Entry]:
        """Each entry under its code and aliases, lowercased and with runs of spaces made one."""
        keys: dict[str, Entry] = {}
        for entry in self.entries:
            for key in (entry.code, *entry.aliases):
                keys.setdefault(normal(key), entry)
        return keys

    @cached_property
    def _texts(self) -> tuple[re.Pattern[str] | None, dict[str, Entry]]:
        """One regex finding any entry's fixed text (longest first, so the most specific wins
        where two start at one place; white space matches any run of it), and the entry of each
        text, by its normal() form."""
        entries = {normal(text): entry for entry in self.entries for text in entry.texts}
        if not entries:
            return None, entries
        return re.compile(_trie(entries), re.IGNORECASE), entries

    @cached_property
    def _lowered_texts(self) -> re.Pattern[str] | None:
        """The fixed texts' regex without IGNORECASE, for lowercased text (several times faster)."""
        pattern, _ = self._texts
        return None if pattern is None else re.compile(pattern.pattern)

    @cached_property
    def _screens(self) -> tuple[tuple[str, ...] | None, ...]:
        """Per reader, the lowercased literals one of which its match contains (None: no screen):
        a reader whose literals a text lacks is not run on it."""
        return tuple(required_literals(reader) for reader in self._compiled)

    @cached_property
    def _anchors(self) -> tuple[str, ...]:
        """The longest word of each fixed text, lowercased: a line holding none of them holds no
        fixed text, so the (slow, one branch per text) regex runs only on lines holding one."""
        _, entries = self._texts
        return tuple(sorted({max(text.split(" "), key=len) for text in entries}))

    @cached_property
    def _anchor_pattern(self) -> re.Pattern[str]:
        """Any anchor, for lowercased text: one pass over it instead of one per anchor."""
        return re.compile(_trie(self._anchors))

    @cached_property
    def _text_words(self) -> tuple[tuple[frozenset[str], tuple[str, ...]], ...]:
        """Per fixed text: the words that are whole words wherever the text is found, and those at
        either end of it (there they may be part of a longer word)."""
        screens = []
        for text in self._texts[1]:
            runs = [(match.start(), match.end()) for match in _WORD.finditer(text)]
            whole = frozenset(text[start:end] for start, end in runs if start > 0 and end < len(text))
            ends = tuple(text[start:end] for start, end in runs if start == 0 or end == len(text))
            screens.append((whole, ends or (text,)))
        return tuple(screens)

    def _may_hold_a_text(self, lowered: str, words: frozenset[str]) -> bool:
        """Whether `lowered` may hold one of the fixed texts: it has every whole word of one (a
        set lookup) and its end words somewhere. Most logs hold none, and are then spared the
        texts' regex (a branch per text at every place of the text)."""
        return any(whole <= words and all(end in lowered for end in ends) for whole, ends in self._text_words)

    def _text_spans(self, text: str, lowered: str) -> list[tuple[int, int]]:
        """The lines of `text` (start, end) that hold an anchor, in order, found in `lowered`
        (text.lower()); the whole text where lowercasing changes its length (the offsets would
        not line up)."""
        if len(lowered) != len(text):
            return [(0, len(text))]
        spans: list[tuple[int, int]] = []
        at = 0
        while (match := self._anchor_pattern.search(lowered, at)) is not None:
            start = lowered.rfind("\n", 0, match.start()) + 1
            end = lowered.find("\n", match.end())
            end = len(text) if end < 0 else end
            spans.append((start, end))
            at = end + 1
        return spans

    def diagnosis_id(self, entry: Entry) -> str:
        return f"{self.id}.{slug(entry.code)}"

    def find(self, text: str, words: frozenset[str] | None = None) -> list[Hit]:
        """Every entry found in `text`, in the order they appear in it. A reader's match and a
        fixed text are each expected within one line. `words`: words_of(text), where the caller
        has it already (one text is looked through by every catalogue)."""
        hits: list[Hit] = []
        lowered = text.lower()
        ascii_text = text.isascii()  # there IGNORECASE equality is str.lower() equality
        for reader, screen in zip(self._compiled, self._screens, strict=True):
            if ascii_text and not may_match(screen, lowered):
                continue
            for match in reader.finditer(text):
                entry = self.by_key.get(normal(match.group("code")), self.unknown)
                if entry is not None:
                    groups = {key: value for key, value in match.groupdict().items() if value}
                    hits.append(Hit(self, entry, match.start(), groups))
        pattern, entries = self._texts
        if pattern is not None and self._may_hold_a_text(
            lowered, words_of(lowered) if words is None else words
        ):
            fast = self._lowered_texts if len(lowered) == len(text) else None
            for start, end in self._text_spans(text, lowered):
                matches = fast.finditer(lowered, start, end) if fast else pattern.finditer(text, start, end)
                hits += (Hit(self, entries[normal(m.group())], m.start(), {}) for m in matches)
        hits.sort(key=lambda hit: hit.at)
        return hits


@dataclass(frozen=True)
class Hit:
    """An entry found in a line: where it starts and the reader's named groups (`code`, ...)."""

    catalogue: Catalogue
    entry: Entry
    at: int
    groups: dict[str, str]

    @property
    def unknown(self) -> bool:
        """A code the readers read that no entry lists."""
        return self.entry is self.catalogue.unknown

    @property
    def id(self) -> str:
        return f"{self.catalogue.id}.unknown" if self.unknown else self.catalogue.diagnosis_id(self.entry)

    @property
    def key(self) -> str:
        """What makes two hits the same finding: the entry, or for an unknown code the code."""
        return f"{self.id} {self.groups.get('code', '')}" if self.unknown else self.id


_SPACES = re.compile(r"\s+")

# A trie of the fixed texts: a node maps a character to the node after it; "" marks a text's end.
_Trie: TypeAlias = "dict[str, _Trie]"


def _trie(texts: Iterable[str]) -> str:
    """One regex finding any of `texts` (lowercase, single-spaced), shaped as a trie: at each place
    in a line one branch per next character is tried instead of one per text (a flat alternation
    of a hundred texts costs about 0.3 ms per line). A space matches any run of white space; where
    texts start at one place, the longest that matches wins (the optional tails are greedy)."""
    root: _Trie = {}
    for text in texts:
        node = root
        for char in text:
            node = node.setdefault(char, {})
        node[""] = {}
    return _trie_regex(root)


def _trie_regex(node: _Trie) -> str:
    branches = [
        (r"\s+" if char == " " else re.escape(char)) + _trie_regex(child)
        for char, child in sorted(node.items())
        if char
    ]
    if not branches:
        return ""
    body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
    return f"(?:{body})?" if "" in node else body


_WORD = re.compile(r"[a-z0-9_]+")


def words_of(lowered: str) -> frozenset[str]:
    """The words of a lowercased text (runs of ASCII letters, digits and `_`)."""
    return frozenset(_WORD.findall(lowered))


def normal(text: str) -> str:
    """`text` lowercased, its runs of white space made one space, stripped."""
    return _SPACES.sub(" ", text).strip().lower()


def slug(code: str) -> str:
    """An id part for a code: `79` → `79`, `cudaErrorSystemNotReady` → `cudaerrorsystemnotready`,
    `NET/IB : No device` → `net-ib-no-device`."""
    return re.sub(r"[^a-z0-9]+", "-", code.lower()).strip("-")

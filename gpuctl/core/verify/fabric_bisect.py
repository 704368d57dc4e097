"""Which runs a group of alike nodes needs until every node has a verdict (`verify --level fabric`).

The whole group runs first. A run that meets its figure passes every node in it. A run whose
output names nodes by their own evidence (NCCL on TCP sockets, NICs missing, a worker pod that
could not run) fails those nodes, and the rest run again without them. A run that falls short
with no node named is split in halves, each run in the next round, until the slow part is down to
a pair; each node of it then runs paired with a node that passed, so only the node that drags the
group down fails: about log2(n) + 1 rounds for one bad node among n. While no node has passed,
suspects run in pairs that never ran together (twice each at most: three nodes, one slow, take
five rounds). A node left with no passing node to pair with keeps the verdict its last run gave
it (a pair that fell short fails both, naming the pair).

Runs of one round share no node: each worker pod takes all of its node's GPUs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

Run = tuple[str, ...]  # the node names of one multi-node all-reduce
CROSS_TRIES = 2  # runs a suspect may make with another suspect while no node has passed


@dataclass(frozen=True)
class RunVerdict:
    """What one run's output says: nodes named by their own evidence (node → message, hint),
    whether the run fell short, and its measurement in words (for messages)."""

    named: dict[str, tuple[str, str]]
    slow: bool
    measured: str
    slow_hint: str = ""
    pass_status: str = "pass"  # warn: measured but not judged (no figure for the group)


@dataclass(frozen=True)
class Decision:
    """A node's fabric verdict: its status, message and hint, the run and round that decided."""

    status: str  # pass | fail | warn
    message: str
    hint: str
    run: Run
    round: int
    verdict: RunVerdict | None = None


@dataclass
class GroupBisection:
    """The runs of one group of alike nodes, round after round, and each node's verdict."""

    members: Run
    decided: dict[str, Decision] = field(default_factory=dict)
    queue: list[Run] = field(default_factory=list)
    good: list[str] = field(default_factory=list)  # passed: partners for the suspects
    waiting: dict[str, Decision] = field(default_factory=dict)  # suspect → verdict if never paired
    pairs: dict[Run, str] = field(default_factory=dict)  # a suspect's run with a passed node
    ran: set[frozenset[str]] = field(default_factory=set)  # every run so far, as a set of nodes
    crossed: dict[str, int] = field(default_factory=dict)  # suspect → its runs with another suspect
    rounds: int = 0

    def __post_init__(self) -> None:
        if len(self.members) >= 2:
            self.queue.append(self.members)
        for name in self.members if len(self.members) == 1 else ():
            why = "not applicable: the only node of its group (a multi-node all-reduce needs two)"
            self.decided[name] = Decision("pass", why, "", self.members, 0)

    def next_runs(self) -> list[Run]:
        """The runs of the next round (none: every node has its verdict)."""
        runs, self.queue = self.queue, []
        busy = {name for run in runs for name in run}
        partners = [name for name in self.good if name not in busy]
        for suspect in list(self.waiting):
            if not partners:
                break
            pair = (suspect, partners.pop(0))
            self.pairs[pair] = suspect
            runs.append(pair)
        if not self.good:
            runs += self._cross_pairs(busy)
        self.ran.update(frozenset(run) for run in runs)
        if runs:
            self.rounds += 1
        else:  # no passing node to pair the rest with: their last run's verdict stands
            self.decided.update(self.waiting)
            self.waiting.clear()
        return runs

    def _cross_pairs(self, busy: set[str]) -> list[Run]:
        """No node has passed yet: pair suspects that never ran as a pair (twice each at most), so
        a pair that passes gives the others a partner (three nodes, one slow: its two others)."""
        runs: list[Run] = []
        free = [name for name in self.waiting if name not in busy and self.crossed.get(name, 0) < CROSS_TRIES]
        while free:
            first = free.pop(0)
            second = next((other for other in free if frozenset((first, other)) not in self.ran), None)
            if second is None:
                continue
            free.remove(second)
            runs.append((first, second))
            for name in (first, second):
                self.crossed[name] = self.crossed.get(name, 0) + 1
        return runs

    def record(self, run: Run, verdict: RunVerdict, round_no: int) -> None:
        for name, (message, hint) in verdict.named.items():
            if name in run:
                self.decided[name] = Decision("fail", message, hint, run, round_no, verdict)
                self.waiting.pop(name, None)
                if name in self.good:
                    self.good.remove(name)
        rest = tuple(name for name in run if name not in verdict.named)
        suspect = self.pairs.pop(run, None)
        if suspect is not None:
            self._record_pair(suspect, run, verdict, round_no)
        elif not verdict.slow:
            self._pass(rest, run, verdict, round_no)
        elif verdict.named:  # the named nodes may explain the shortfall: the rest run again
            self._retry(rest, run, verdict, round_no)
        else:
            self._split(run, verdict, round_no)

    def _pass(self, names: Run, run: Run, verdict: RunVerdict, round_no: int) -> None:
        for name in names:
            self.decided[name] = Decision(verdict.pass_status, verdict.measured, "", run, round_no, verdict)
            self.good.append(name)
            self.waiting.pop(name, None)

    def _retry(self, rest: Run, run: Run, verdict: RunVerdict, round_no: int) -> None:
        if len(rest) >= 2:
            self.queue.append(rest)
            return
        for name in rest:  # alone: its own ranks showed nothing wrong
            alone = (
                f"{verdict.measured}; the nodes named in this run explain the shortfall and no "
                "other node of its group is left to run with"
            )
            self.waiting[name] = Decision(verdict.pass_status, alone, "", run, round_no, verdict)

    def _split(self, run: Run, verdict: RunVerdict, round_no: int) -> None:
        halves = (run[: len(run) // 2], run[len(run) // 2 :]) if len(run) >= 3 else (run,)
        for half in halves:
            if len(half) >= 2 and len(run) >= 3:
                self.queue.append(half)
                continue
            for name in half:
                others = ", ".join(other for other in run if other != name)
                message = (
                    f"one of this node and {others} drags the all-reduce down ({verdict.measured}); "
                    "no node of its group passed to pair each with"
                )
                self.waiting[name] = Decision("fail", message, verdict.slow_hint, run, round_no, verdict)

    def _record_pair(self, suspect: str, run: Run, verdict: RunVerdict, round_no: int) -> None:
        partner = next(name for name in run if name != suspect)
        self.waiting.pop(suspect, None)
        if suspect in verdict.named:
            return
        if verdict.slow and partner not in verdict.named:
            message = f"paired with {partner}, which passed: {verdict.measured}"
            self.decided[suspect] = Decision("fail", message, verdict.slow_hint, run, round_no, verdict)
            return
        if not verdict.slow:
            self._pass((suspect,), run, verdict, round_no)
        else:  # the partner failed by its own evidence: the suspect waits for another partner
            self.waiting[suspect] = Decision(
                verdict.pass_status, verdict.measured, "", run, round_no, verdict
            )

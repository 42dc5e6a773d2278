"""The verdicts of a check, once (reports/RESULTS-FORMAT.md "Verdicts"): each one's word (what results.json,
JUnit and the case binaries' verdict lines hold), its label, its rank and whether it fails a run.

The rank is the one answer to "which verdict is worse", lowest first: a MUST that did not hold (fail, or flaky:
it held in one attempt and not in another) outranks a check that could not conclude (error, timeout), which
outranks a check the infrastructure kept from running (infra_error: the provider's code never ran), then a
SHOULD not met (warning), then pass, then not applicable, which checked nothing. Verdicts of one rank are alike
to every reader: JUnit makes the first a failure, the second an error (infra_error an error of its own type)
and the last a skip; the report's area letter and the order of a statement's checks go by rank alone; where one
verdict must stand for several (a negotiation cell's), the worst rank wins and the declaration order breaks a tie.

infra_error does not fail a run as a provider's failure does: a run whose only problems are infrastructure
errors exits with a status of its own (harness/commands/run.py EXIT_INFRA), so a CI tells a lost node from a
broken provider; where both are, the provider's failure decides (1).
"""
from __future__ import annotations

import enum


class Verdict(enum.StrEnum):
    """Declared in the taxonomy's order, which every count (results.json's summary, a cell's counts) keeps."""

    def __new__(cls, word: str, label: str, rank: int, failing: bool):
        member = str.__new__(cls, word)
        member._value_ = word
        member.label, member.rank, member.failing = label, rank, failing
        return member

    PASS = "pass", "pass", 4, False
    FAIL = "fail", "fail", 0, True
    NOT_APPLICABLE = "not_applicable", "not applicable", 5, False
    WARNING = "warning", "warning", 3, False
    ERROR = "error", "error", 1, True
    TIMEOUT = "timeout", "timeout", 1, True
    # Only from several attempts (harness/run/attempts.py): its MUSTs held in one and failed in another.
    FLAKY = "flaky", "flaky", 0, True
    # Only from the harness, where a placement could not set up its sides (containers/placement.py InfraError)
    # before any of the cell's provider code ran; never from a verdict line (harness/results/results.py).
    INFRA_ERROR = "infra_error", "infrastructure error", 2, False


# The words, as plain strings: what goes into a file is the word, never the enum.
VERDICTS = tuple(v.value for v in Verdict)
LABELS = {v.value: v.label for v in Verdict}
FAILING = tuple(v.value for v in Verdict if v.failing)
NOT_HELD = tuple(v.value for v in Verdict if v.rank == Verdict.FAIL.rank)     # a MUST did not hold: has a cause
UNDECIDED = tuple(v.value for v in Verdict if v.rank == Verdict.ERROR.rank)   # the check could not conclude
HELD = (Verdict.PASS.value, Verdict.WARNING.value)                            # the check's MUSTs held
INFRA = tuple(v.value for v in Verdict if v.rank == Verdict.INFRA_ERROR.rank)  # never run: the placement's fault
# JUnit's element for a verdict, by its rank: a MUST not held, no conclusion, nothing checked (none: a testcase alone).
# An infrastructure error is JUnit's error too (the case did not run: not a skip, which CI shows as fine), told
# apart by its type attribute (harness/results/results.py).
JUNIT = {**dict.fromkeys(NOT_HELD, "failure"), **dict.fromkeys(UNDECIDED, "error"), **dict.fromkeys(INFRA, "error"),
         Verdict.NOT_APPLICABLE.value: "skipped"}
# Worst first: by rank, then in the declaration order.
BY_RANK = tuple(sorted(VERDICTS, key=lambda w: (Verdict(w).rank, VERDICTS.index(w))))
# A word outside the taxonomy (a broken run's) ranks with the checks that could not conclude.
UNKNOWN_RANK = Verdict.ERROR.rank


def rank(word) -> int:
    """The rank of a verdict word (a result's, read from a file: any string)."""
    try:
        return Verdict(word).rank
    except ValueError:
        return UNKNOWN_RANK


def worst(words) -> str | None:
    """The worst of some verdict words of the taxonomy (None for none): the lowest rank, then the first declared."""
    return min((w for w in words if w in LABELS), key=BY_RANK.index, default=None)

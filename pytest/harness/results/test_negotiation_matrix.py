"""The negotiation matrix's verdict per pair (harness/run/negotiation.py), from the negotiation cases' results of
each cell: the worst of them by the verdicts' one rank (harness/results/verdicts.py): a failure, then a flaky
result (a MUST that did not hold in one attempt), then an error or timeout, then a warning; a pair whose cases all
did not apply is not applicable. Issue 36: the rank is the one every reader uses; before it, this matrix alone
put flaky below error and said error for a timeout."""
import pathlib
import types

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
from harness.run import negotiation  # noqa: E402
from harness.results.results import Result  # noqa: E402

AI_BASE = types.SimpleNamespace(name="a", profiles=["ai_base"])
HPC = types.SimpleNamespace(name="h", profiles=["hpc"])
CELL = types.SimpleNamespace(id="a__h", initiator=AI_BASE, target=HPC, areas=["negotiation"])


def verdict_of(*verdicts):
    results = [Result("a__h", "negotiation", "uet-cases-negotiation", f"N.C{i}", v) for i, v in enumerate(verdicts)]
    m = negotiation.matrix([CELL], results)
    return m["cells"][0]["verdict"], m["failing"]


@pytest.mark.parametrize("verdicts, expected", [
    (("pass", "flaky", "fail"), ("fail", 1)),
    (("pass", "flaky", "timeout"), ("flaky", 1)),
    (("pass", "timeout"), ("timeout", 1)),
    (("timeout", "error"), ("error", 1)),
    (("pass", "flaky", "warning"), ("flaky", 1)),
    (("pass", "warning"), ("warning", 0)),
    (("pass", "not_applicable"), ("pass", 0)),
    (("not_applicable",), ("not_applicable", 0))])
def test_the_pairs_verdict(verdicts, expected):
    assert verdict_of(*verdicts) == expected

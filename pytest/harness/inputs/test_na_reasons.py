"""A submission's not-applicable results as ./uet verify judges them against the declared reason codes
(spec/not-applicable-reasons.yaml, read by harness/inputs/not_applicable.py): a result without a code, with a code no
list declares, or with one a submission may not hold is named with its id."""
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
from harness.inputs import not_applicable  # noqa: E402

TABLE = {"fine": {"class": "not-claimed", "description": "d", "allowed_in_submission": True},
         "hidden": {"class": "not-claimed", "description": "d", "allowed_in_submission": False}}


@pytest.mark.parametrize("result, problem", [
    ({"id": "c/a/X", "reason": "not applicable: no dgram"},
     "c/a/X: not applicable without a reason code (reason: 'not applicable: no dgram')"),
    ({"id": "c/a/X", "reason_code": "fine"}, None),
    ({"id": "c/a/X", "reason_code": "hidden"},
     "c/a/X: not applicable under reason code 'hidden' (not-claimed), not allowed in a submission"),
    ({"id": "c/a/X", "reason_code": "because"},
     "c/a/X: not applicable under reason code 'because', which spec/not-applicable-reasons.yaml does not list")])
def test_each_result_is_judged_by_its_code(result, problem):
    assert not_applicable.submission_problem(result, TABLE) == problem


def test_without_a_list_no_code_is_allowed():
    assert not_applicable.submission_problem({"id": "c/a/X", "reason_code": "fine"}, None) == \
        "c/a/X: not applicable under reason code 'fine', which no reason code list allows"


def test_the_suites_list_allows_what_hides_no_claimed_feature():
    table = not_applicable.load()
    assert {c for c, e in table.items() if not e["allowed_in_submission"]} >= {"manifest-lacks-hook"}

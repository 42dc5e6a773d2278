"""The not-applicable reason codes as ./uet verify reads them: the list's shape checked entry by entry, each
problem named with the file and the entry."""
import pathlib
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
from harness import na_reasons  # noqa: E402

ENTRY = "- {id: a, class: not-claimed, description: d, allowed_in_submission: true}\n"


def load(tmp_path, text):
    path = tmp_path / "reasons.yaml"
    path.write_text(text)
    return path, na_reasons.load(path)


def test_a_list_and_a_mapping_of_reasons_read_the_same(tmp_path):
    assert load(tmp_path, ENTRY)[1] == load(tmp_path, "reasons:\n" + ENTRY.replace("- ", "  - "))[1] == {
        "a": {"id": "a", "class": "not-claimed", "description": "d", "allowed_in_submission": True}}


@pytest.mark.parametrize("text, problem", [
    ("- {id: a, class: maybe, allowed_in_submission: true}\n",
     "entry 1 (a): class 'maybe' is not one of not-claimed, no-such-combination"),
    ("- {id: a, class: not-claimed, allowed_in_submission: yes please}\n",
     "entry 1 (a): allowed_in_submission must be true or false"),
    (ENTRY + ENTRY, "entry 2: id 'a' is listed twice"),
    ("- {class: not-claimed}\n", "entry 1: needs an `id` (a string)"),
    ("just: text\n", "a list of reason codes was expected, not dict")])
def test_a_bad_list_is_named(tmp_path, text, problem):
    path = tmp_path / "reasons.yaml"
    path.write_text(text)
    with pytest.raises(na_reasons.ReasonsError) as err:
        na_reasons.load(path)
    assert str(err.value) == f"{path}: {problem}"


def test_a_result_without_a_code_is_not_allowed():
    assert na_reasons.problem({"id": "c/a/X", "reason": "not applicable: no dgram"}, {}) == \
        "c/a/X: not applicable without a reason code (reason: 'not applicable: no dgram')"

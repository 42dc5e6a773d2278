"""The words of the conformance statement: a statement's statuses and how the levels are totalled. Shared by
the statement (harness/results/conformance_statement.py), its CSV and its workbook, which the statement writes."""

STATUSES = ("met", "not_met", "inconclusive", "not_observed", "not_applicable")
STATUS_LABELS = {"met": "met", "not_met": "not met", "inconclusive": "inconclusive",
                 "not_observed": "not observed", "not_applicable": "not applicable"}
# The totals a certifier reads first: MUST NOT is a MUST, SHOULD NOT a SHOULD.
LEVEL_GROUPS = {"MUST": ("MUST", "MUST NOT"), "SHOULD": ("SHOULD", "SHOULD NOT"),
                "OTHER": ("MAY", "NOT REQUIRED", "INFO")}
# Whose word a check's verdict is (results.json `judged_by`, harness/wire/wire_oracle.py): the provider under test
# runs inside the case binary, so what the binary alone says is the provider process's own report.
JUDGED_BY_LABELS = {"wire_oracle": "re-derived from the kept capture (wire oracle)",
                    "case_binary": "self-reported: the case binary, where the provider runs",
                    "harness": "the harness"}

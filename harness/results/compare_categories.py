"""What ./uet compare sorts the changes between two runs into, and the title of each: shared by the text
(harness/trends/compare.py) and the pages (reports/ci_view.py), which must not import each other."""

CATEGORIES = ("regressions", "fixes", "infra_errors", "changed", "new_checks", "removed_checks", "reasons", "blame")

TITLES = {"regressions": "regressions (held before, failing now)", "fixes": "fixes (failing before, held now)",
          "infra_errors": "not run now: lost to the infrastructure (infra_error; no regression of the provider)",
          "changed": "other verdict changes", "new_checks": "new checks", "removed_checks": "removed checks",
          "reasons": "changed reasons (same verdict)", "blame": "changed blame (same verdict)"}

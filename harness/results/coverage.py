#!/usr/bin/python3
"""Coverage of the requirement catalogue (spec/catalogue.yaml) by executable checks.

    /usr/bin/python3 -m harness.results.coverage [--junit FILE...] [--format text|json] [--catalogue PATH] [--strict]

A statement is covered when it has at least one executable check:
  (a) a case named in its `cases:` list in the catalogue, or
  (b) a <testcase> in one of the JUnit XML files that carries the property `requirements` (comma-separated
      statement IDs). gtest's RecordProperty("requirements", "2.2.4.4-b,2.2.4.4-c") and pytest's
      record_property("requirements", "...") both write <property name="requirements" value="..."/>;
      a `requirements` attribute on <testcase> (older gtest) is read too.
A check counts whatever its outcome (passed, failed, skipped); the JSON output gives the outcomes.

Exit status: 0 report printed; 1 with --strict when a test names an ID the catalogue does not have;
2 bad usage; 3 the catalogue is invalid or a JUnit file cannot be read.
"""
import argparse
import collections
import json
import os
import re
import sys
import xml.etree.ElementTree as ET

from harness.files.untrusted import printable
from harness.inputs import catalogue as catalogue_mod
from harness.results.results import junit_suites
from harness.results.verdicts import JUNIT
FOCUS_SECTIONS = ("2.2.4", "2.2.5")
PROFILE_LABELS = {"ai_base": "AI Base", "ai_full": "AI Full", "hpc": "HPC"}


def _ids(value):
    return [part for part in re.split(r"[,\s]+", value or "") if part]


# A testcase's outcome by the first of these JUnit elements it holds; with none, passed.
OUTCOMES = {"failure": "failed", "error": "error", "skipped": "skipped"}


def _outcome(case):
    element = next((e for e in OUTCOMES if case.find(e) is not None), None)
    if element is None and case.get("status") == "notrun":
        return "skipped"
    return OUTCOMES.get(element, "passed")


def read_junit(paths):
    """[(requirement id, {"test", "file", "outcome"})] from JUnit XML files. Raises OSError/ET.ParseError."""
    found = []
    for path in paths:
        root = ET.parse(path).getroot()
        for case in root.iter("testcase"):
            values = [case.get("requirements")] if case.get("requirements") else []
            for prop in case.iter("property"):
                if prop.get("name") == "requirements":
                    values.append(prop.get("value") or prop.text or "")
            if not values:
                continue
            name = "%s.%s" % (case.get("classname"), case.get("name")) if case.get("classname") else case.get("name")
            record = {"test": name, "file": str(path), "outcome": _outcome(case)}
            seen = set()
            for value in values:
                for ident in _ids(value):
                    if ident not in seen:
                        seen.add(ident)
                        found.append((ident, record))
    return found


def checks_of_results(results, junit_path):
    """What read_junit finds in `junit_path` when results.write_junit wrote it from `results` (the same records,
    in the same order), taken from the results themselves: their statement ids stay a list, never joined into
    the JUnit property to be split again."""
    found = []
    for (cell, area), rs in junit_suites(results).items():
        for r in rs:
            record = {"test": "%s.%s" % (printable(f"{cell}.{area}"), printable(r.case)), "file": str(junit_path),
                      "outcome": OUTCOMES.get(JUNIT.get(r.verdict), "passed")}
            found += [(ident, record) for ident in dict.fromkeys(printable(s) for s in r.statements)]
    return found


def compute(cat, junit_paths=(), found=None):
    """The coverage report as a dict (what --format json prints); `found`: read_junit(junit_paths) when given."""
    checks = collections.defaultdict(list)
    for st in cat:
        for case in st.cases:
            checks[st.id].append({"test": case, "file": "spec/catalogue.yaml", "outcome": "declared"})
    unknown = collections.defaultdict(list)
    for ident, record in read_junit(junit_paths) if found is None else found:
        if ident in cat:
            checks[ident].append(record)
        else:
            unknown[ident].append(record["test"])

    covered = {st.id for st in cat if checks.get(st.id)}
    observable = [st for st in cat if st.observable]

    def tally(statements):
        obs = [s for s in statements if s.observable]
        return {"total": len(statements), "observable": len(obs),
                "not_observable": len(statements) - len(obs),
                "covered": sum(1 for s in statements if s.id in covered),
                "covered_observable": sum(1 for s in obs if s.id in covered)}

    by_level = {lv: tally(cat.by_level(lv)) for lv in catalogue_mod.LEVELS}
    by_section = {sec: tally(cat.by_section(sec) if sec != "2.2" else [s for s in cat if s.section == "2.2"])
                  for sec in cat.sections()}
    by_check = {c: tally(cat.by_check(c)) for c in catalogue_mod.CHECKS}
    reasons = collections.Counter(s.check_reason for s in cat if not s.observable)

    focus = [s for sec in FOCUS_SECTIONS for s in cat.by_section(sec)
             if s.level in catalogue_mod.ABSOLUTE_LEVELS and s.observable and s.id not in covered]
    # The MUSTs of the focus sections no case can check, with the catalogue's reason (check_reason).
    unobservable = [s for sec in FOCUS_SECTIONS for s in cat.by_section(sec)
                    if s.level in catalogue_mod.ABSOLUTE_LEVELS and not s.observable and s.id not in covered]
    covering_unobservable = sorted(s.id for s in cat if not s.observable and s.id in covered)

    def brief(s):
        return {"id": s.id, "level": s.level, "level_unconfirmed": s.level_unconfirmed, "check": s.check,
                "profiles": list(s.profiles), "condition": s.condition, "missing": list(s.missing),
                "text": s.text}

    return {
        "catalogue": catalogue_mod.display_path(cat.path),
        "junit_files": [str(p) for p in junit_paths],
        "total": len(cat),
        "observable": len(observable),
        "covered": len(covered),
        "covered_observable": sum(1 for s in observable if s.id in covered),
        "by_level": by_level,
        "by_section": by_section,
        "by_check": by_check,
        "not_observable_reasons": dict(reasons.most_common()),
        "uncovered_observable_musts": {sec: [brief(s) for s in focus if s.section == sec]
                                       for sec in FOCUS_SECTIONS},
        "unobservable_musts": {sec: [dict(brief(s), reason=s.check_reason) for s in unobservable if s.section == sec]
                               for sec in FOCUS_SECTIONS},
        "covered_but_marked_not_observable": covering_unobservable,
        "unknown_requirements": {k: sorted(set(v)) for k, v in sorted(unknown.items())},
        "statements": {s.id: {"level": s.level, "check": s.check, "covered": s.id in covered, "text": s.text,
                              "checks": checks.get(s.id, [])} for s in cat},
    }


def _pct(n, d):
    return "%3d%%" % round(100.0 * n / d) if d else "   -"


def format_text(report):
    out = []
    w = out.append
    n_files = len(report["junit_files"])
    w("Requirement catalogue coverage: %s" % report["catalogue"])
    w("  %d statements, %d observable (api, wire, both or control), %d not observable; checks read from %d JUnit file%s"
      " and the catalogue's cases" % (report["total"], report["observable"], report["total"] - report["observable"],
                                      n_files, "" if n_files == 1 else "s"))
    if report["covered"] == 0:
        w("")
        w("COVERAGE IS 0: no statement has an executable check yet (no `cases:` in the catalogue%s)."
          % (" and no testcase in the JUnit files carries a `requirements` property" if n_files
             else "; no JUnit files given (--junit)"))
    else:
        w("  covered: %d of %d statements (%s), %d of %d observable statements (%s)" % (
            report["covered"], report["total"], _pct(report["covered"], report["total"]).strip(),
            report["covered_observable"], report["observable"],
            _pct(report["covered_observable"], report["observable"]).strip()))

    def table(title, rows):
        w("")
        w("%-14s %8s %11s %8s %15s" % (title, "covered", "observable", "total", "not observable"))
        for name, t in rows:
            w("%-14s %8d %11d %8d %15d   %s of observable" % (
                name, t["covered_observable"], t["observable"], t["total"], t["not_observable"],
                _pct(t["covered_observable"], t["observable"])))

    table("By level", report["by_level"].items())
    table("By section", [("§" + k, v) for k, v in report["by_section"].items()])
    table("By check kind", report["by_check"].items())

    w("")
    w("Not observable, by reason:")
    for reason, n in report["not_observable_reasons"].items():
        w("  %3d  %s" % (n, reason))

    for sec, rows in report["uncovered_observable_musts"].items():
        w("")
        w("Observable MUST / MUST NOT statements of §%s without a check: %d (no case yet)" % (sec, len(rows)))
        for r in rows:
            flags = []
            if r["level_unconfirmed"]:
                flags.append("level?")
            if r["missing"]:
                flags.append("MISSING " + ", ".join(r["missing"]))
            if len(r["profiles"]) < len(catalogue_mod.PROFILES):
                flags.append("/".join(PROFILE_LABELS[p] for p in r["profiles"]))
            if r["condition"]:
                flags.append("if " + r["condition"])
            w("  %-15s %-8s %-4s %s%s" % (r["id"], r["level"], r["check"], r["text"],
                                          ("  [" + "; ".join(flags) + "]") if flags else ""))

    for sec, rows in report["unobservable_musts"].items():
        w("")
        w("MUST / MUST NOT statements of §%s no case can check (not observable): %d" % (sec, len(rows)))
        for r in rows:
            w("  %-15s %-8s %s  [%s]" % (r["id"], r["level"], r["text"], r["reason"]))

    if report["covered_but_marked_not_observable"]:
        w("")
        w("Checked, but marked not_observable in the catalogue (update `check`): "
          + ", ".join(report["covered_but_marked_not_observable"]))
    if report["unknown_requirements"]:
        w("")
        w("Tests name requirement IDs the catalogue does not have:")
        for ident, tests in report["unknown_requirements"].items():
            w("  %-15s %s" % (ident, ", ".join(tests)))
    return "\n".join(out) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m harness.results.coverage",
                                     description="Coverage of spec/catalogue.yaml by executable checks.")
    parser.add_argument("--junit", nargs="+", action="extend", default=[], metavar="FILE",
                        help="JUnit XML files whose testcases carry a `requirements` property")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--catalogue", default=None, help="catalogue file (default: spec/catalogue.yaml)")
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 when a test names a requirement ID the catalogue does not have")
    args = parser.parse_args(argv)
    try:
        cat = catalogue_mod.load(args.catalogue)
    except catalogue_mod.CatalogueError as exc:
        print(exc, file=sys.stderr)
        return 3
    try:
        report = compute(cat, args.junit)
    except (OSError, ET.ParseError) as exc:
        print("coverage: cannot read JUnit XML: %s" % exc, file=sys.stderr)
        return 3
    try:
        if args.format == "json":
            json.dump(report, sys.stdout, indent=2, ensure_ascii=False)
            sys.stdout.write("\n")
        else:
            sys.stdout.write(format_text(report))
        sys.stdout.flush()
    except BrokenPipeError:              # e.g. piped into head: not an error of the report
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    if args.strict and report["unknown_requirements"]:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The index page's sections, in page order, as a table: each row names its template
(templates/sections/KEY.html, whose <section id> is KEY with dashes), its link in the page's navigation, the
variables its template reads, and when it is shown. A new section is its template and a row here."""
from __future__ import annotations

import dataclasses
import pathlib
import typing

from harness.inputs import not_applicable as not_applicable_reasons
from reports import ci_view, view


@dataclasses.dataclass(frozen=True)
class Page:
    """What a section's variables are made from."""
    results: dict
    run_dir: pathlib.Path
    statement_text: typing.Callable
    causes: list
    spec_pages: list   # one page per spec version when the run checked more than one; the matrices move there


@dataclasses.dataclass(frozen=True)
class Section:
    key: str
    nav: str                                            # the navigation link's words
    variables: typing.Callable[[Page], dict]
    shown: typing.Callable[[dict], bool] = lambda variables: True

    @property
    def anchor(self) -> str:
        return self.key.replace("_", "-")

    @property
    def template(self) -> str:
        return f"sections/{self.key}.html"


def _is_set(name):
    return lambda variables: variables[name] is not None


# The verdict first, then what to act on, then the detail behind it; the run's facts close the page.
SECTIONS = (
    Section("summary", "summary", lambda p: {"summary": view.summary(p.results)}),
    Section("failures", "failures", lambda p: {
        "causes": p.causes,
        "failures": view.failures(p.results.get("results", []), p.run_dir, p.statement_text,
                                  view.choice_label_lookup(p.results))}),
    Section("ci", "CI", lambda p: {"ci": ci_view.ci(p.results)}, _is_set("ci")),
    Section("negotiation_matrix", "negotiation",
            lambda p: {"negotiation": None if p.spec_pages else view.negotiation_matrix(p.results)},
            _is_set("negotiation")),
    Section("interop_matrix", "interoperability",
            lambda p: {"interop": None if p.spec_pages else view.interop_matrix(p.results)}, _is_set("interop")),
    Section("spec_versions", "matrices by spec version", lambda p: {}, lambda variables: bool(variables["spec_pages"])),
    Section("coverage", "coverage",
            lambda p: {"coverage": view.coverage(p.results), "statements": view.statement_rows(p.results)}),
    Section("not_applicable", "not applicable", lambda p: {
        "not_applicable": view.not_applicable(p.results),
        "na_breakdown": view.not_applicable_breakdown(p.results, not_applicable_reasons.codes())}),
    Section("run_info", "run", lambda p: {}),
)


def index_variables(page: Page) -> dict:
    """The index template's variables: every section's, and `sections`, the ones shown, in page order."""
    out = {"spec_pages": page.spec_pages}
    for section in SECTIONS:
        out.update(section.variables(page))
    out["sections"] = [s for s in SECTIONS if s.shown(out)]
    return out

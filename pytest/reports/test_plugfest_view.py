"""The plugfest matrix's rules on rows the ledger writes (harness/plugfest/ledger.py record, with provenance as
harness/plugfest/provenance.py gives it): a cell whose packages differ in a side's build is mixed, a package
certified before the one recorded is superseded at once, a certification date that cannot be read leaves the
age unknown and the cell stale. The real packages and their pages: pytest/harness/certify/test_plugfest.py."""
import datetime

import pytest

from harness.plugfest import ledger
from harness.plugfest.provenance import Cell, Provenance
from harness.trends import history_index
from reports import plugfest_view

NOW = datetime.datetime(2026, 11, 29, 12, tzinfo=datetime.timezone.utc)
COMMIT, COMMIT_TIME = "a" * 40, 1_790_000_000


def provenance(lab="Lab A", build="vendor 1.0 · libfabric 2.1.0 (suite) · manifest 0123456789ab",
               certified="2026-11-28T12:00:00+00:00"):
    cell = Cell("x__y", "x", "y", build, "softuet 0.1 · libfabric 2.1.0 (suite) · manifest ba9876543210",
                "cells/x__y.html", {"pass": 3, "not_applicable": 1})
    return Provenance(lab, "package", COMMIT, COMMIT_TIME, certified, (cell,))


@pytest.fixture
def db(tmp_path):
    con = history_index.connect(tmp_path / "h.sqlite")
    yield con
    con.close()


def record(db, digest, prov):
    return ledger.record(db, digest * 64, f"{digest}.tar.zst", prov, NOW.isoformat(), "VALID",
                         plugfest_view.evidence_folder(digest * 64))


def the_cell(db):
    site = plugfest_view.site(ledger.packages(db), NOW)
    return site["rows"][0]["cells"][1]   # rows and columns: x, y


class TestRules:
    def test_packages_of_other_builds_sit_beside_each_other_and_the_cell_says_mixed(self, db):
        assert record(db, "1", provenance()) == ledger.Recorded(None, None)
        assert record(db, "2", provenance(build="vendor 1.1 · libfabric 2.1.0 (suite) · manifest 0123456789ab")) == \
            ledger.Recorded(None, None)
        cell = the_cell(db)
        assert (cell["mixed"], cell["stale"], cell["age"], cell["total"]) == (
            ["its packages differ in provider builds (2 pairs of builds)"], [], 1, 8)

    def test_a_package_certified_before_the_one_recorded_is_superseded_at_once(self, db):
        record(db, "1", provenance(certified="2026-11-28T12:00:00+00:00"))
        assert record(db, "2", provenance(certified="2026-11-28T12:30:00+01:00"))  # 11:30 UTC == ledger.Recorded(None, "1" * 64)
        cell = the_cell(db)
        assert ([e["hash"] for e in cell["entries"]], [e["hash"] for e in cell["superseded"]]) == (["1" * 16], ["2" * 16])

    def test_another_lab_is_never_superseded(self, db):
        record(db, "1", provenance())
        assert record(db, "2", provenance(lab="Lab B", certified="2026-11-28T18:00:00+00:00")) == \
            ledger.Recorded(None, None)
        assert [e["lab"] for e in the_cell(db)["entries"]] == ["Lab A", "Lab B"]

    def test_a_date_that_cannot_be_read_leaves_the_age_unknown_and_the_cell_stale(self, db):
        record(db, "1", provenance(certified="yesterday"))
        cell = the_cell(db)
        assert (cell["age"], cell["stale"]) == (None, ["a package's certification date cannot be read, so its age is unknown"])

    def test_the_threshold_is_more_than_the_named_number_of_days(self, db):
        limit = plugfest_view.STALE_AFTER_DAYS
        record(db, "1", provenance(certified=(NOW - datetime.timedelta(days=limit)).isoformat()))
        assert (the_cell(db)["age"], the_cell(db)["stale"]) == (limit, [])
        record(db, "2", provenance(lab="Lab B", certified=(NOW - datetime.timedelta(days=limit + 1)).isoformat()))
        assert the_cell(db)["stale"] == [f"its oldest package was certified {limit + 1} days ago, more than {limit}"]

    def test_a_package_recorded_meanwhile_is_refused_by_the_ledger_and_changes_no_row(self, db):
        record(db, "1", provenance())
        before = ledger.packages(db)
        with pytest.raises(ledger.AlreadyRecorded):
            record(db, "1", provenance(lab="Lab B"))
        assert ledger.packages(db) == before and not db.in_transaction

#!/usr/bin/python3
"""Print one closing line over JUnit XML files: 'test: N passed, N failed, N skipped'.

Exit status 1 when any test failed or errored, or when no test ran at all.
"""
import sys
import xml.etree.ElementTree as ET


def count(paths):
    passed = failed = skipped = 0
    for path in paths:
        root = ET.parse(path).getroot()
        for case in root.iter("testcase"):
            if case.find("failure") is not None or case.find("error") is not None:
                failed += 1
            elif case.find("skipped") is not None or case.get("status") == "notrun":
                skipped += 1
            else:
                passed += 1
    return passed, failed, skipped


def main(argv):
    paths = argv[1:]
    if not paths:
        print("test: 0 passed, 1 failed (no JUnit XML was written)")
        return 1
    passed, failed, skipped = count(paths)
    print(f"test: {passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed or passed == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

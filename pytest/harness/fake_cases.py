"""Misbehaving providers for the harness's tests: a fake case binary that speaks the verdict protocol (signed
lines, as cases/common/claims/verdict.cpp) and lists its cases as googletest does, each case doing what it is
told; and the manifest of the hostile provider (conftest.py hostile_provider) in one of its modes."""
import json
import pathlib

# The fake: CASES maps each case to what it does (pass, hang, segv, exit0: exits 0 before it starts; starve:
# hangs while three spinners of its own process group queue for the one CPU they are pinned to, as a
# busy host keeps a binary's threads waiting; lose-namespace: deletes the network namespace it runs in, as a
# provider running as root there may, then hangs; says-infra-error: ends the case with the verdict
# infra_error, signed as the binary signs);
# STARTUP is what happens before any case (nothing, segv, hang), as a provider's fi_getinfo at start-up.
FAKE = """#!/usr/bin/python3
import hashlib, hmac, json, os, signal, sys, time
CASES = json.loads(%(cases)r)
STARTUP = %(startup)r
if sys.argv[1:] == ["--uet-traits"]:  # the area's traits, as a built binary gives them
    print(%(traits)r)
    sys.exit(0)
if "--gtest_list_tests" in sys.argv:  # listing opens no fabric: it works even where the provider does not
    print("Fake.")
    for case in CASES:
        print("  " + case.split(".", 1)[1])
    sys.exit(0)
with open(os.environ["UET_CASES_LAUNCHES"], "a") as f:
    f.write("launch\\n")
if STARTUP == "segv":
    os.kill(os.getpid(), signal.SIGSEGV)
if STARTUP == "hang":
    time.sleep(600)
flt = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("--gtest_filter="))
excluded = set(flt.split("-", 1)[1].split(":")) if "-" in flt else set()
out = open(json.load(open(os.environ["UET_CASES_PLAN"]))["results"], "a")
key = os.read(int(os.environ["UET_CASES_VERDICT_KEY_FD"]), 256).strip()
seq = iter(range(100000))
def line(**kw):
    body = json.dumps(dict(kw, seq=next(seq)))
    out.write(hmac.new(key, body.encode(), hashlib.sha256).hexdigest() + " " + body + "\\n"); out.flush()
for case, does in CASES.items():
    if case in excluded:
        continue
    if does == "exit0":
        sys.exit(0)
    line(event="start", case=case)
    if does == "segv":
        os.kill(os.getpid(), signal.SIGSEGV)
    if does == "starve":
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
        for _ in range(3):
            if os.fork() == 0:
                while True:
                    pass
    if does == "lose-namespace":
        import subprocess
        own = subprocess.run(["ip", "netns", "identify", str(os.getpid())], capture_output=True, text=True).stdout.strip()
        subprocess.run(["ip", "netns", "delete", own], check=True)
    if does in ("hang", "starve", "lose-namespace"):
        time.sleep(600)
    verdict = "infra_error" if does == "says-infra-error" else "pass"
    line(event="end", case=case, verdict=verdict, statements=["2.2.6-a"], seconds=0.01)
"""


def fake_build(tmp_path, cases: dict, traits: str, startup: str = "none", area: str = "fake") -> pathlib.Path:
    build = tmp_path / "build"
    (build / "cases").mkdir(parents=True, exist_ok=True)
    binary = build / "cases" / f"uet-cases-{area}"
    binary.write_text(FAKE % {"cases": json.dumps(cases), "startup": startup, "traits": traits})
    binary.chmod(0o755)
    return build


def hostile_manifest(folder: pathlib.Path, lib: pathlib.Path, mode: str, **environment) -> pathlib.Path:
    path = folder / f"hostile-{mode}.yaml"
    path.write_text(f"provider: hostile\nuet: false\nprofiles: []\nendpoint_types: [rdm]\nfeatures: {{}}\n"
                    f"peer_netns: true\nenvironment:\n  FI_PROVIDER_PATH: {lib}\n  HOSTILE_PROVIDER_MODE: {mode}\n"
                    + "".join(f"  {k}: {v}\n" for k, v in environment.items()))
    return path

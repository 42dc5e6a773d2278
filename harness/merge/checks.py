"""What ./uet merge checks before it writes anything: each folder is a whole shard's run, read by results.json's
one reader; together they are every shard of one plan, each once, no check in two. Each refusal names the
folder and the problem, and for a missing or interrupted shard the command that runs it again."""
from __future__ import annotations

import dataclasses
import pathlib
import shlex

from harness.files import input_files
from harness.results.results import read_results_json
from harness.shards import fingerprint, partition

# How a refusal names a fingerprint's part.
PART_WORDS = {"suite": "the suite's commit", "binaries": "the binaries", "libfabric": "libfabric",
              "manifests": "the manifests", "seed": "the seed", "count": "N (the number of shards)",
              "spec_version": "the spec version", "mode": "the run's mode", "options": "the options",
              "weights": "the weights the cut was made by", "cut": "the cut"}


class Refused(Exception):
    """The merge would give a smaller or mixed run: exit 2 with this message."""


@dataclasses.dataclass
class Shard:
    folder: pathlib.Path
    doc: dict

    @property
    def record(self) -> dict:
        return self.doc["run_info"]["shard"]

    @property
    def label(self) -> str:
        return f"shard {self.record['index']}/{self.record['count']}"


def run_folder(path: pathlib.Path) -> pathlib.Path:
    """The run folder `path` names: itself, or the run its `latest` names when it is a report folder (a link
    that leads out of it is not followed)."""
    path = pathlib.Path(path)
    latest = path / "latest"
    if not (path / "results.json").exists() and latest.is_symlink():
        target = latest.resolve()
        if target.parent == path.resolve():
            return target
    return path


def read(path: pathlib.Path) -> Shard:
    folder = run_folder(path)
    if not (folder / "results.json").is_file():
        raise Refused(f"{path}: not a shard's run folder (no results.json in it)")
    try:
        doc = read_results_json(folder)[1]
    except input_files.InputError as exc:
        raise Refused(f"{path}: not a shard's run: {exc}") from None
    record = (doc.get("run_info") or {}).get("shard")
    if not isinstance(record, dict) or not {"index", "count", "fingerprint", "parts", "units", "all_units", "cut"} <= record.keys():
        raise Refused(f"{path}: not a shard's run (its results.json has no run_info.shard: it ran without --shard I/N)")
    if fingerprint.of(record["parts"]) != record["fingerprint"]:
        raise Refused(f"{path}: its fingerprint is not that of the parts it lists (run_info.shard was changed)")
    return Shard(folder, doc)


def cut_problem(record: dict) -> str | None:
    """What is wrong with a shard's record of the cut, which its fingerprint does not cover: the cut is made
    again from the fingerprinted weights, and the shard's units must be its part of it. Otherwise a shard that
    left a unit out of its units and its results would merge into a smaller run that looks whole."""
    index, count, names = record["index"], record["count"], record["all_units"]
    weights = record["parts"].get("weights")
    if not isinstance(index, int) or count != record["parts"].get("count") or not 1 <= index <= count:
        return f"its shard number {index}/{count} is not one of 1 to {record['parts'].get('count')}"
    if not isinstance(weights, dict) or not isinstance(names, list) or sorted(map(str, names)) != sorted(weights):
        return "its units are not those its fingerprint weighs"
    try:
        remade = partition.cut(names, weights, count)
    except (partition.ShardError, TypeError, ValueError):
        return "its units cannot be cut into its shards"
    if remade != record["cut"]:
        return "its cut of the plan is not the one its fingerprinted weights give"
    if record["units"] != remade[index - 1]:
        return f"its units are not those of shard {index}/{count} of the cut"
    return None


def command_without(command: str, *options: str) -> str:
    """A command line (as run_info.command says it) without the options named and their values."""
    out, skip = [], False
    for w in shlex.split(command):
        if skip:
            skip = False
        elif w in options:
            skip = True
        elif not w.startswith(tuple(f"{o}=" for o in options)):
            out.append(w)
    return " ".join(w if i < 2 else shlex.quote(w) for i, w in enumerate(out))


def rerun_command(shard: Shard, index: int) -> str:
    """The command that runs shard `index` of `shard`'s plan: its command with --shard index/N and the seed;
    another shard's --report is left out (engines give each shard a folder of its own: ./uet run's default, or
    the --report the engine gives shard `index`)."""
    drop = ("--shard", "--seed") if index == shard.record["index"] else ("--shard", "--seed", "--report")
    command = command_without(shard.doc["run_info"].get("command") or "./uet run", *drop)
    return f"{command} --shard {index}/{shard.record['count']} --seed {shard.doc['run_info']['seed']}"


def check(paths: list[pathlib.Path]) -> list[Shard]:
    """The shards of `paths`, in shard order; Refused naming the first problem found."""
    seen: dict[pathlib.Path, pathlib.Path] = {}
    shards = []
    for path in paths:
        real = run_folder(path).resolve()
        if real in seen:
            raise Refused(f"{path}: given twice (also as {seen[real]}): its checks would be counted twice")
        seen[real] = path
        shards.append(read(path))
    first = shards[0]
    for s in shards:
        if s.doc["run_info"].get("partial"):
            raise Refused(f"{s.folder}: {s.label} was interrupted (run_info.partial): run it again: "
                          f"{rerun_command(s, s.record['index'])}")
    for s in shards[1:]:
        differ = fingerprint.differing(first.record["parts"], s.record["parts"])
        if differ:
            what = "; ".join(f"{PART_WORDS.get(p, p)} ({_difference(first.record['parts'].get(p), s.record['parts'].get(p))}"
                             f" in {first.folder} and {s.folder})" for p in differ[:3])
            raise Refused(f"the shards are not of one run: their fingerprints differ in {what}")
    for s in shards:  # of one run, each shard must hold its own part of the run's cut
        problem = cut_problem(s.record)
        if problem:
            raise Refused(f"{s.folder}: {problem} (run_info.shard was changed)")
    count = first.record["count"]
    by_index: dict[int, Shard] = {}
    for s in shards:
        if s.record["index"] in by_index:
            raise Refused(f"{s.label} given twice: {by_index[s.record['index']].folder} and {s.folder}: its checks "
                          "would be counted twice")
        by_index[s.record["index"]] = s
    missing = [i for i in range(1, count + 1) if i not in by_index]
    if missing:
        raise Refused("; ".join(f"shard {i}/{count} is missing (units: {', '.join(first.record['cut'][i - 1])}); run it: "
                                f"{rerun_command(first, i)}" for i in missing))
    owner: dict[str, Shard] = {}
    for s in sorted(by_index.values(), key=lambda s: s.record["index"]):
        units = set(s.record["units"])
        for r in s.doc["results"]:
            if r["id"] in owner and cell_wide(r, s.record):
                continue  # one record of the cell in the whole run: merge_run keeps the first shard's
            if r["id"] in owner:
                raise Refused(f"{r['id']} is counted twice: in {owner[r['id']].folder} ({owner[r['id']].label}) and in "
                              f"{s.folder} ({s.label})")
            owner[r["id"]] = s
            if unit_of(r, s.record) not in units:
                raise Refused(f"{s.folder}: {r['id']} is not a check of {s.label} (its units: {', '.join(sorted(units))})")
    return [by_index[i] for i in range(1, count + 1)]


def cell_wide(result: dict, record: dict) -> bool:
    """A harness record of a whole cell ("the cell could not run") whose areas ran in several shards: each of
    them may say it, as the whole run says it once."""
    return result.get("area") == "harness" and result.get("cell") not in record["all_units"]


def unit_of(result: dict, record: dict) -> str:
    """The unit a result belongs to: its cell, or cell/area when the plan's one cell is cut by area (a cell's
    own error, area "harness", belongs to the cell's first unit of the shard)."""
    cell = result.get("cell") or ""
    if cell in record["all_units"]:
        return cell
    unit = f"{cell}/{result.get('area')}"
    if unit in record["all_units"] or not record["units"]:
        return unit
    return next((u for u in record["units"] if u.startswith(cell + "/")), unit)


def _shown(value) -> str:
    text = fingerprint.canonical(value).decode()
    return text if len(text) <= 80 else text[:77] + "..."


def _difference(a, b) -> str:
    """How two values of a part differ: the keys that differ when both are objects (a binary, an option)."""
    if isinstance(a, dict) and isinstance(b, dict):
        keys = [k for k in sorted(a.keys() | b.keys()) if fingerprint.canonical(a.get(k)) != fingerprint.canonical(b.get(k))]
        return "; ".join(f"{k}: {_difference(a.get(k), b.get(k))}" for k in keys[:3]) + ("; ..." if len(keys) > 3 else "")
    return f"{_shown(a)} vs {_shown(b)}"

"""Providers taking turns, run by run (A B A B ...), for the FEP benchmarks: a slow spell of a shared machine
then falls on every provider rather than on whichever happened to run at the time."""
from __future__ import annotations

import statistics
from typing import Callable


def take_turns(runners: dict[str, Callable[[], dict[str, float]]], repeat: int, label: str,
               errors: tuple[type[BaseException], ...], stop_on_error: bool) -> dict[str, dict]:
    """Each runner `repeat` times, in turns; per runner, the median of each figure its runs returned, or
    {"error": first line} when one of its runs raised one of `errors`, and it runs no more. With
    `stop_on_error` the first such error is raised instead (for figures that mean nothing without every
    runner's)."""
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in runners}
    failed: dict[str, str] = {}
    for i in range(repeat):
        for name, run in runners.items():
            if name in failed:
                continue
            print(f"{label} {name} (run {i + 1} of {repeat})", flush=True)
            try:
                runs[name].append(run())
            except errors as err:
                if stop_on_error:
                    raise
                failed[name] = str(err).splitlines()[0]
    return {name: {"error": failed[name]} if name in failed else
            {key: statistics.median(r[key] for r in runs[name]) for key in runs[name][0]} for name in runners}

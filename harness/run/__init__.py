"""Running the suite: the plan, cells, the case binaries, budgets, the verdict channel, attempts, progress."""

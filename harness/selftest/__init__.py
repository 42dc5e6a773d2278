"""The suite tested by faults: the mutation run over softuet's knobs, and the fuzzing campaigns."""

"""Captures and what is judged on them: the decoder cross-check, the wire oracle, evidence frames."""

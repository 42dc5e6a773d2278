"""The ./uet commands' front: for each command run in Python, its help, its options and the checks of them
that need nothing but Python's standard library, and the guard every command runs under.

Why a room of its own: ./uet answers --help and bad usage before its set-up has installed Debian's Python
packages (python3-yaml, -jsonschema, -jinja2, ...), so nothing here may import them, nor import a harness
module that does. pytest/harness/commands/test_before_setup.py runs every command with those packages hidden.
Checks that need the packages (a manifest's schema, a pair file, the spec versions) run in the command's
own module, after ./uet has installed them.
"""

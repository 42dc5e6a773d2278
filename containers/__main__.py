"""CLI for humans debugging a pair: up, down [--all], list, cleanup-stale, exec a|b -- CMD...

    /usr/bin/python3 -m containers up [--mtu 9000]     # prints the pair as JSON; it stays until 'down'
    /usr/bin/python3 -m containers exec b -- ip -br addr
    /usr/bin/python3 -m containers down                # the only CLI pair, or name it: down uet-cli-1
    /usr/bin/python3 -m containers down --all          # every uet-cli-* pair
"""
import argparse
import json
import os
import sys

from . import netns


def _pick(pair_arg):
    """The pair named by --pair, or the only uet-cli-* pair."""
    if pair_arg:
        return netns.attach(pair_arg)
    cli = [p for p in netns.existing_pairs().values() if p["owner"] == netns.CLI_TAG]
    if len(cli) != 1:
        raise netns.NamespaceError(
            f"{len(cli)} CLI pairs exist ({', '.join(p['prefix'] for p in cli) or 'none'}): "
            "name one with --pair PREFIX|INDEX")
    return netns.attach(cli[0]["prefix"])


def cmd_up(args):
    pair = netns.NamespacePair(mtu=args.mtu, owner=netns.CLI_TAG, keep=True,
                               ready_timeout=args.ready_timeout)
    pair.up()
    print(json.dumps(pair.as_dict(), indent=2))
    return 0


def cmd_down(args):
    pairs = netns.existing_pairs()
    if args.all:
        targets = [p for p in pairs.values() if p["owner"] == netns.CLI_TAG]
    elif args.pair:
        targets = [netns.attach(args.pair).as_dict()]
    else:
        targets = [_pick(None).as_dict()]
    removed = []
    for p in targets:
        removed += netns.delete_pair(p["prefix"])
    print(json.dumps({"removed": removed}))
    return 0


def cmd_list(args):
    out = []
    for p in sorted(netns.existing_pairs().values(), key=lambda p: p["index"]):
        entry = dict(p)
        if "a" in p and "b" in p:
            entry.update(netns.attach(p["prefix"]).as_dict())
        out.append(entry)
    print(json.dumps(out, indent=2))
    return 0


def cmd_cleanup_stale(args):
    print(json.dumps({"removed": netns.cleanup_stale()}))
    return 0


def cmd_exec(args):
    argv = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not argv:
        raise netns.NamespaceError("exec needs a command after '--', e.g. exec a -- ip -br addr")
    pair = _pick(args.pair)
    full = pair._exec_argv(args.side, argv)
    os.execv(full[0], full)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m containers", description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(__doc__.splitlines()[1:]))
    sub = parser.add_subparsers(dest="command", required=True)
    up = sub.add_parser("up", help="create a pair (prefix uet-cli-N), print it as JSON, keep it")
    up.add_argument("--mtu", type=int)
    up.add_argument("--ready-timeout", type=float, default=10.0)
    up.set_defaults(func=cmd_up)
    down = sub.add_parser("down", help="delete the CLI pair (or PAIR, or --all CLI pairs)")
    down.add_argument("pair", nargs="?", help="prefix (uet-cli-1) or index (1)")
    down.add_argument("--all", action="store_true", help="every uet-cli-* pair")
    down.set_defaults(func=cmd_down)
    ls = sub.add_parser("list", help="every uet-* pair on the host, as JSON")
    ls.set_defaults(func=cmd_list)
    stale = sub.add_parser("cleanup-stale", help="delete uet-<pid>-* pairs whose process is gone")
    stale.set_defaults(func=cmd_cleanup_stale)
    ex = sub.add_parser("exec", help="run a command in side a or b: exec a -- CMD...")
    ex.add_argument("--pair", help="prefix or index (default: the only CLI pair)")
    ex.add_argument("side", choices=netns.SIDES)
    ex.add_argument("cmd", nargs=argparse.REMAINDER)
    ex.set_defaults(func=cmd_exec)
    args = parser.parse_args(argv)
    try:
        netns.require_root()
        netns.tool("ip")
        return args.func(args)
    except netns.NamespaceError as e:
        print(f"containers: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

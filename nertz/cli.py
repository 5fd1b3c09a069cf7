"""The ``nertz`` command: ``replay``, ``analyse``, ``rules``, ``simulate``, ``serve``, ``bot``.

Bad input never shows a traceback: the command prints one line naming the problem to stderr and
exits 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from nertz.errors import NertzError

if TYPE_CHECKING:
    from nertz.rl.train import TrainConfig
from nertz.rules import OPTIONS, PRESET_SOURCES, PRESET_SUMMARIES, PRESETS, Rules


def _replay(args: argparse.Namespace) -> int:
    from nertz import render, replay

    file = replay.load(args.file)
    if args.json:
        result = replay.run(file)
        print(json.dumps(result.to_json()))
        return 0
    names = file.players

    def on_move(r: int, outcome: replay.MoveOutcome, rnd: Any) -> None:
        tm = outcome.move
        who = names[tm.p]
        mark = "ok" if outcome.ok else f"rejected: {outcome.error}"
        print(f"  {tm.t:>7} ms  {who:<12} {tm.m!s:<9} {mark}")

    print(f"rules: {json.dumps(file.rules.to_spec())}   players: {', '.join(names)}")
    rounds_out = []

    def run_with_headers() -> replay.Replayed:
        current = -1

        def hook(r: int, outcome: replay.MoveOutcome, rnd: Any) -> None:
            nonlocal current
            if r != current:
                current = r
                print(f"\nRound {r + 1}")
            on_move(r, outcome, rnd)

        return replay.run(file, hook)

    result = run_with_headers()
    for r, rr in enumerate(result.rounds, start=1):
        if not rr.outcomes:
            print(f"\nRound {r}\n  (no moves)")
        score = rr.result.score
        how = score.ended
        if score.caller is not None:
            how += f", called by {names[score.caller]}"
        rounds_out.append((r, how, rr))
    last = result.rounds[-1] if result.rounds else None
    if last is not None:
        print("\nThe table at the end\n" + render.draw(last.round, names))
    print("\nScores")
    width = max(len(n) for n in names)
    for r, how, rr in rounds_out:
        print(f"  round {r} ({how})")
        for seat, s in enumerate(rr.result.score.seats):
            parts = [f"{s.foundation_cards} cards +{s.card_points}"]
            if s.nertz_left:
                parts.append(f"{s.nertz_left} left -{s.nertz_penalty}")
            for label, value in (
                ("caller", s.caller_bonus), ("variant", s.variant_bonus),
                ("false calls", s.false_calls), ("lotto", s.lotto),
            ):
                if value:
                    parts.append(f"{label} {value:+d}")
            print(f"    {names[seat]:<{width}} {s.total:>5}   ({', '.join(parts)})")
    print("  totals: " + ", ".join(f"{n} {t}" for n, t in zip(names, result.match.totals,
                                                                 strict=True)))
    if result.match.over:
        w = result.match.winner
        print("  match over: " + ("a tie" if w is None else f"{names[w]} wins"))
    else:
        print("  match goes on")
    return 0


def _analyse(args: argparse.Namespace) -> int:
    from nertz import analysis, replay

    report = analysis.analyse(replay.load(args.file))
    print(json.dumps(report.to_json()) if args.json else report.text())
    return 0


def _value(v: Any) -> Any:
    if v is True:
        return "on"
    if v is False:
        return "off"
    if v is None:
        return "none"
    return v


def _rules(args: argparse.Namespace) -> int:
    if args.name is None:
        if args.json:
            print(json.dumps({name: {"source": PRESET_SOURCES[name],
                                     "summary": PRESET_SUMMARIES[name],
                                     "options": r.to_options()}
                              for name, r in PRESETS.items()}))
            return 0
        print("Presets (nertz rules NAME shows every option):")
        for name in PRESETS:
            print(f"  {name:<22} [{PRESET_SOURCES[name]}] {PRESET_SUMMARIES[name]}")
        return 0
    spec: Any = args.name
    if args.name.lstrip().startswith("{"):
        try:
            spec = json.loads(args.name)
        except json.JSONDecodeError as exc:
            raise NertzError(f"rules: not JSON: {exc.msg}") from None
    rules = Rules.from_spec(spec)
    for item in args.set or []:
        name, sep, value = item.partition("=")
        if not sep:
            raise NertzError(f"--set takes OPTION=VALUE, not {item!r}")
        rules = rules.replace(**{name.strip(): value.strip()})
    rules.check_new()
    if args.json:
        print(json.dumps({"rules": rules.to_spec(), "options": rules.to_options()}))
        return 0
    print(f"{args.name}: {PRESET_SUMMARIES.get(args.name, json.dumps(rules.to_spec()))}")
    for name, option in OPTIONS.items():
        value = getattr(rules, name)
        mark = "" if value == getattr(PRESETS["pagat"], name) else " *"
        print(f"  {name:<20} {_value(value)!s:<12}{mark:<3} [{option.source}] {option.doc}")
    print("  (* differs from the default)")
    return 0


def _serve(args: argparse.Namespace) -> int:
    # Imported here: the web stack is needed only by this command.
    from nertz.server.serve import serve

    return serve(args.host, args.port, args.db, tuple(args.allow_origin or ()), args.deal_seed,
                 args.rooms_per_minute, trusted_proxies=tuple(args.trust_proxy or ()),
                 sockets_per_address=args.sockets_per_address, max_sockets=args.max_sockets,
                 room_idle_minutes=args.room_idle_minutes, workers=args.workers,
                 redis=args.redis, redis_prefix=args.redis_prefix, handoff=args.handoff)


def _bot(args: argparse.Namespace) -> int:
    # Imported here: the network client is needed only by this command.
    import asyncio

    from nertz.net.netbot import run_bot

    try:
        return asyncio.run(run_bot(args.url, args.level, args.bot, args.name, args.matches))
    except KeyboardInterrupt:
        return 130


def _train(args: argparse.Namespace) -> int:
    # Imported here: training needs the rl extra (sb3-contrib, PyTorch).
    try:
        from nertz.rl.train import TrainConfig, train
    except ImportError as exc:
        print(f"nertz train: needs the rl extra (pip install 'nertz[rl]'): {exc}",
              file=sys.stderr)
        return 2
    config = TrainConfig(
        rules=args.rules, seats=args.seats, opponents=args.opponents.split(","),
        minutes=args.minutes, max_steps=args.max_steps, seed=args.seed, envs=args.envs,
        threads=args.threads, eval_rounds=args.eval_rounds,
    )
    if args.evaluate:
        return _evaluate(args.evaluate, config)
    try:
        result = train(config, args.out, log=None if args.quiet else print)
    except ValueError as exc:
        print(f"nertz train: {exc}", file=sys.stderr)
        return 2
    print(f"policy: {result.policy} ({result.steps} steps, {result.cpu_seconds:.0f} s CPU, "
          f"{result.wall_seconds:.0f} s wall)")
    if result.curve_png is not None:
        print(f"curve: {result.curve_png}")
    if result.evaluation is not None:
        for who, figures in result.evaluation.items():
            print(f"{who}: win share {figures['win_share']:.3f}, mean score "
                  f"{figures['mean_score']:.1f} over {figures['rounds']} rounds")
    return 0


def _evaluate(path: str, config: TrainConfig) -> int:
    """``nertz train --evaluate POLICY``: the policy's and random play's figures, no training."""
    from nertz.rl.policy import Policy
    from nertz.rl.train import evaluate

    config.check()
    rounds = config.eval_rounds or 1000
    for who, policy in (("learned", Policy.load(path)), ("random", None)):
        figures = evaluate(policy, config, rounds)
        print(f"{who}: win share {figures['win_share']:.3f}, mean score "
              f"{figures['mean_score']:.1f} over {figures['rounds']} rounds", flush=True)
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``nertz`` command."""
    import nertz

    parser = argparse.ArgumentParser(prog="nertz", description="Nertz: rules, replays, bots.")
    parser.add_argument(
        "--version", action="version",
        version=f"nertz {nertz.__version__} (engine: {nertz.FORM})",
        help="the version, and which form of the engine loaded (compiled or pure)",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("replay", help="replay a .nertz.json file")
    p.add_argument("file")
    p.add_argument("--json", action="store_true", help="print SPEC's JSON result")
    p.set_defaults(func=_replay)
    p = sub.add_parser("analyse", help="what a replay file's match teaches each seat")
    p.add_argument("file")
    p.add_argument("--json", action="store_true", help="print the analysis as JSON")
    p.set_defaults(func=_analyse)
    p = sub.add_parser("rules", help="list the presets, or print one ruleset")
    p.add_argument("name", nargs="?", help="a preset name or a JSON rules object")
    p.add_argument("--set", action="append", metavar="OPTION=VALUE", help="override an option")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_rules)
    p = sub.add_parser("serve", help="the web game on http://127.0.0.1:8000")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--db", default=None,
                   help="database URL (default: a SQLite file in the user's data directory; "
                        "postgresql://... works the same)")
    p.add_argument("--allow-origin", action="append", metavar="ORIGIN",
                   help="another page origin allowed to open sockets (repeatable)")
    p.add_argument("--deal-seed", type=int, default=None, metavar="N",
                   help="deal every room's n-th match alike, from N (tests and demos only: "
                        "whoever knows N knows every card)")
    p.add_argument("--rooms-per-minute", type=int, default=20, metavar="N",
                   help="rooms one client address may create a minute (default 20; 0: no "
                        "limit, for load tests)")
    p.add_argument("--trust-proxy", action="append", metavar="ADDRESS",
                   help="a proxy in front (address or network) whose X-Forwarded-For names the "
                        "client (repeatable; default: none, the peer is the client)")
    p.add_argument("--sockets-per-address", type=int, default=100, metavar="N",
                   help="sockets one client address may hold open (default 100; 0: no limit)")
    p.add_argument("--max-sockets", type=int, default=4000, metavar="N",
                   help="sockets open at once, from everyone (default 4000; 0: no limit)")
    p.add_argument("--room-idle-minutes", type=float, default=30.0, metavar="M",
                   help="a room with nobody connected this long closes (default 30); its "
                        "finished matches stay downloadable")
    p.add_argument("--workers", type=int, default=1, metavar="N",
                   help="processes sharing the port (default 1); above 1 they need --db "
                        "postgresql://... and Redis")
    p.add_argument("--redis", default=None, metavar="URL",
                   help="Redis (redis://HOST:PORT/DB) of a service of many processes or "
                        "machines: room ownership, the relay between processes and the limits "
                        "they share (default with --workers above 1: redis://127.0.0.1:6379/0; "
                        "with one worker and none, this process is the whole service)")
    p.add_argument("--redis-prefix", default=None, metavar="PREFIX",
                   help="Redis key prefix of this service (default nertz:), to keep services "
                        "sharing one Redis apart")
    p.add_argument("--no-handoff", dest="handoff", action="store_false",
                   help="relay every socket for a room owned by another process through "
                        "Redis, as between machines, instead of handing the connection to that "
                        "process when it runs on this machine")
    p.set_defaults(func=_serve)
    p = sub.add_parser("bot", help="join a room over the network as a bot player")
    p.add_argument("--url", required=True, help="the room's link (http://HOST:PORT/r/CODE)")
    p.add_argument("--level", required=True,
                   help="speed: beginner, casual, skilled or expert")
    p.add_argument("--bot", default="greedy", help="random, greedy or expert (default greedy)")
    p.add_argument("--name", default=None, help="display name (default: the level and bot)")
    p.add_argument("--matches", type=int, default=0,
                   help="leave after this many finished matches (default 0: stay)")
    p.set_defaults(func=_bot)
    p = sub.add_parser("train", help="train a policy for the learned bot (the rl extra)")
    p.add_argument("--rules", default="pagat", help="a preset name (default pagat)")
    p.add_argument("--seats", type=int, default=3, help="seats at each table (default 3)")
    p.add_argument("--opponents", default="greedy",
                   help="comma-separated bots for the other seats, one or one per seat "
                        "(default greedy)")
    p.add_argument("--minutes", type=float, default=20.0,
                   help="CPU minutes of training (default 20)")
    p.add_argument("--max-steps", type=int, default=None, help="stop after this many steps")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--envs", type=int, default=8, help="tables stepped together (default 8)")
    p.add_argument("--threads", type=int, default=1, help="PyTorch threads (default 1)")
    p.add_argument("--eval-rounds", type=int, default=1000,
                   help="rounds to evaluate the policy and random play on (default 1000; 0: "
                        "none)")
    p.add_argument("--out", default="train-out",
                   help="directory for policy.npz, curve.csv/png, eval.json")
    p.add_argument("--quiet", action="store_true", help="no line per rollout")
    p.add_argument("--evaluate", metavar="POLICY",
                   help="only evaluate this policy file (and random play) against the opponents")
    p.set_defaults(func=_train)
    from nertz.sim import cli as sim_cli

    sim_cli.add_parser(sub)
    return parser



def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (2 on bad input, with a one-line message)."""
    for stream in (sys.stdout, sys.stderr):
        # Whatever a file holds, printing it must not crash on the terminal's encoding.
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args)
    except NertzError as exc:
        print(f"nertz {args.command}: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    return code


if __name__ == "__main__":
    raise SystemExit(main())

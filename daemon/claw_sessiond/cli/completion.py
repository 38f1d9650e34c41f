"""``completion bash|zsh|fish``: shell completion scripts made from the CLI's own parser.

The script is generated from the argparse parser itself (commands, options,
choices), so it cannot drift from the CLI. A ``SESSION`` argument is
completed with the ids of the workspace's daemon (``completion
--list-sessions``, a hidden option the scripts call; nothing when no daemon
answers). Exit codes: 0 ok, 2 usage error.
"""

from __future__ import annotations

import argparse
import functools
import shlex
import sys
from collections.abc import Callable, Iterator, Mapping

from claw_sessiond_client import SessiondError

from .connect import open_client, socket_path
from .failure import EXIT_OK, EXIT_USAGE, report_error
from .options import Command
from .termsafe import visible

__all__ = ["completion_command", "completion_script"]


_SHELLS = ("bash", "zsh", "fish")


def _completion_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("shell", nargs="?", choices=_SHELLS, help="the shell to print a completion script for")
    # What the scripts call to complete a SESSION argument: ids of the workspace's daemon, nothing if none answers.
    parser.add_argument("--list-sessions", action="store_true", help=argparse.SUPPRESS)
    parser.epilog = (
        "bash: source <(claw-sessiond completion bash)   (or save it under "
        "~/.local/share/bash-completion/completions/claw-sessiond); "
        "zsh: claw-sessiond completion zsh > ~/.zfunc/_claw-sessiond (a folder on $fpath); "
        "fish: claw-sessiond completion fish > ~/.config/fish/completions/claw-sessiond.fish. "
        "Exit codes: 0 ok, 2 usage error."
    )


def _options(parser: argparse.ArgumentParser) -> Iterator[argparse.Action]:
    for action in parser._actions:
        if action.option_strings and action.help != argparse.SUPPRESS:
            yield action


def _takes_value(action: argparse.Action) -> bool:
    return action.nargs != 0


def _short_help(action: argparse.Action | None, text: str | None = None) -> str:
    """The first clause of a help text (no parenthesis, no env note), for one line of a completion menu."""
    raw = text if text is not None else (action.help or "" if action is not None else "")
    for cut in (" [env ", " (", "; ", ": "):
        raw = raw.split(cut, 1)[0]
    return raw[:60].replace("'", "’")


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, tuple[str, argparse.ArgumentParser]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            # Aliases (list, rm) are left out: completion offers each command once, by its name.
            return {name: (helps[name], sub) for name, sub in action.choices.items() if name in helps}
    return {}


def _value_kind(action: argparse.Action) -> str:
    if action.choices:
        return "choices"
    if action.dest == "workspace":
        return "dir"
    if action.dest in ("socket", "output"):
        return "file"
    return "text"


def _bash(parser: argparse.ArgumentParser) -> str:
    commands = _subcommands(parser)
    subs = [sub for _, sub in commands.values()]
    valued = {o for p in [parser, *subs] for a in _options(p) if _takes_value(a) for o in a.option_strings}
    others = sorted(valued - {"--workspace", "--socket"})
    lines = [
        "# bash completion for claw-sessiond (claw-sessiond completion bash)",
        "_claw_sessiond() {",
        '    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" cmd="" i',
        "    local -a where=()  # --workspace/--socket given on the line: session ids come from that daemon",
        "    for ((i = 1; i < COMP_CWORD; i++)); do",
        '        case "${COMP_WORDS[i]}" in',
        '            --workspace|--socket) where+=("${COMP_WORDS[i]}" "${COMP_WORDS[i+1]}"); ((i++)) ;;',
        f"            {'|'.join(others)}) ((i++)) ;;",
        "            -*) ;;",
        '            *) [[ -z $cmd ]] && cmd="${COMP_WORDS[i]}" ;;',
        "        esac",
        "    done",
        '    case "$prev" in',
    ]
    seen: set[str] = set()
    for p in [parser, *(sub for _, sub in commands.values())]:
        for a in _options(p):
            if not _takes_value(a) or a.option_strings[0] in seen:
                continue
            seen.add(a.option_strings[0])
            kind = _value_kind(a)
            if kind == "choices":
                words = shlex.quote(" ".join(str(c) for c in a.choices or ()))
                reply = f'COMPREPLY=($(compgen -W {words} -- "$cur"))'
            elif kind == "dir":
                reply = 'COMPREPLY=($(compgen -d -- "$cur"))'
            elif kind == "file":
                reply = 'COMPREPLY=($(compgen -f -- "$cur"))'
            else:
                reply = "COMPREPLY=()"
            lines.append(f"        {'|'.join(a.option_strings)}) {reply}; return ;;")
    lines += ["    esac", '    case "$cmd" in']
    top = " ".join(o for a in _options(parser) for o in a.option_strings)
    names = " ".join(commands)
    lines.append(
        f'        "") if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W {shlex.quote(top)} -- "$cur")); '
        f'else COMPREPLY=($(compgen -W {shlex.quote(names)} -- "$cur")); fi ;;'
    )
    for name, (_, sub) in commands.items():
        opts = " ".join(o for a in _options(sub) for o in a.option_strings)
        positional = [a for a in sub._actions if not a.option_strings and a.dest != "help"]
        fallback = "COMPREPLY=()"
        if positional and positional[0].choices:
            words = shlex.quote(" ".join(str(c) for c in positional[0].choices))
            fallback = f'COMPREPLY=($(compgen -W {words} -- "$cur"))'
        elif positional and positional[0].dest in ("file", "folder"):
            fallback = 'COMPREPLY=($(compgen -f -- "$cur"))'
        elif positional and positional[0].dest == "session":
            ids = '$(claw-sessiond completion --list-sessions "${where[@]}" 2>/dev/null)'
            fallback = f'COMPREPLY=($(compgen -W "{ids}" -- "$cur"))'
        lines.append(
            f'        {name}) if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W {shlex.quote(opts)} -- "$cur")); '
            f"else {fallback}; fi ;;"
        )
    lines += ["    esac", "}", "complete -o default -F _claw_sessiond claw-sessiond", ""]
    return "\n".join(lines)


def _zsh_text(text: str) -> str:
    """Text inside a single-quoted _arguments spec: no quote, and [ ] : escaped."""
    return text.replace("'", "’").replace("\\", "").replace("[", "(").replace("]", ")").replace(":", " -")


def _zsh_spec(a: argparse.Action) -> str:
    names = a.option_strings
    head = f"{{{','.join(names)}}}" if len(names) > 1 else names[0]
    exclude = f"({' '.join(names)})" if len(names) > 1 else ""
    spec = ("'" + exclude + "'" if exclude else "") + head + "'[" + _zsh_text(_short_help(a)) + "]"
    if _takes_value(a):
        kind = _value_kind(a)
        action = {
            "choices": "(" + " ".join(str(c) for c in a.choices or ()) + ")",
            "dir": "_files -/",
            "file": "_files",
        }.get(kind, " ")
        spec += f":{_zsh_text(a.dest)}:{action}"
    return spec + "'"


def _zsh(parser: argparse.ArgumentParser) -> str:
    commands = _subcommands(parser)
    lines = [
        "#compdef claw-sessiond",
        "# zsh completion for claw-sessiond (claw-sessiond completion zsh)",
        "_claw_sessiond_sessions() {  # ids of the daemon of this folder (or of $CLAW_SESSIOND_WORKSPACE)",
        "    local -a ids",
        '    ids=(${(f)"$(claw-sessiond completion --list-sessions 2>/dev/null)"})',
        "    compadd -a ids",
        "}",
        "_claw_sessiond() {",
        "    local curcontext=$curcontext state line",
        "    local -a commands",
        "    commands=(",
    ]
    lines += [f"        '{name}:{_zsh_text(_short_help(None, h))}'" for name, (h, _) in commands.items()]
    lines += ["    )", "    _arguments -C \\"]
    lines += [f"        {_zsh_spec(a)} \\" for a in _options(parser) if a.dest not in ("help", "version")]
    lines += [
        "        '1: :->command' \\",
        "        '*:: :->args' && return 0",
        "    case $state in",
        "        command) _describe -t commands 'claw-sessiond command' commands ;;",
        "        args)",
        "            case $line[1] in",
    ]
    for name, (_, sub) in commands.items():
        specs = [_zsh_spec(a) for a in _options(sub) if a.dest != "help"]
        positional = [a for a in sub._actions if not a.option_strings and a.dest != "help"]
        for p in positional:
            if p.choices:
                specs.append(f"'1:{p.dest}:(" + " ".join(str(c) for c in p.choices) + ")'")
            elif p.dest in ("file", "folder"):
                specs.append(f"'1:{p.dest}:_files'")
            elif p.dest == "session":
                specs.append("'1:session:_claw_sessiond_sessions'")
            else:
                specs.append(f"'1:{_zsh_text(p.metavar if isinstance(p.metavar, str) else p.dest)}: '")
        lines.append(f"                {name}) _arguments {' '.join(specs)} ;;")
    lines += [
        "            esac",
        "            ;;",
        "    esac",
        "}",
        'if [[ $zsh_eval_context[-1] == loadautofunc ]]; then _claw_sessiond "$@"; '
        "else compdef _claw_sessiond claw-sessiond; fi",
        "",
    ]
    return "\n".join(lines)


def _fish_text(text: str) -> str:
    return text.replace("\\", "").replace("'", "’")


def _fish_option(a: argparse.Action, condition: str) -> str:
    parts = ["complete -c claw-sessiond", f"-n {shlex.quote(condition)}"]
    for o in a.option_strings:
        parts.append(f"-l {o[2:]}" if o.startswith("--") else f"-s {o[1:]}")
    if _takes_value(a):
        kind = _value_kind(a)
        if kind == "choices":
            parts.append("-x -a " + shlex.quote(" ".join(str(c) for c in a.choices or ())))
        elif kind == "dir":
            parts.append("-x -a '(__fish_complete_directories)'")
        elif kind == "file":
            parts.append("-r -F")
        else:
            parts.append("-x")
    parts.append(f"-d '{_fish_text(_short_help(a))}'")
    return " ".join(parts)


def _fish(parser: argparse.ArgumentParser) -> str:
    commands = _subcommands(parser)
    lines = ["# fish completion for claw-sessiond (claw-sessiond completion fish)", "complete -c claw-sessiond -f"]
    for name, (h, _) in commands.items():
        lines.append(
            f"complete -c claw-sessiond -n __fish_use_subcommand -a {name} -d '{_fish_text(_short_help(None, h))}'"
        )
    lines += [_fish_option(a, "__fish_use_subcommand") for a in _options(parser) if a.dest not in ("help",)]
    for name, (_, sub) in commands.items():
        condition = f"__fish_seen_subcommand_from {name}"
        lines += [_fish_option(a, condition) for a in _options(sub) if a.dest != "help"]
        for p in (a for a in sub._actions if not a.option_strings and a.dest != "help"):
            if p.choices:
                words = shlex.quote(" ".join(str(c) for c in p.choices))
                lines.append(f"complete -c claw-sessiond -n {shlex.quote(condition)} -a {words}")
            elif p.dest in ("file", "folder"):
                lines.append(f"complete -c claw-sessiond -n {shlex.quote(condition)} -F")
            elif p.dest == "session":
                ids = "'(claw-sessiond completion --list-sessions 2>/dev/null)'"
                lines.append(f"complete -c claw-sessiond -n {shlex.quote(condition)} -a {ids}")
    return "\n".join(lines) + "\n"


def completion_script(parser: argparse.ArgumentParser, shell: str) -> str:
    """The completion script for ``shell`` ("bash", "zsh" or "fish") from ``parser``, the CLI's own."""
    return {"bash": _bash, "zsh": _zsh, "fish": _fish}[shell](parser)


def _completion(
    args: argparse.Namespace, *, build_parser: Callable[[Mapping[str, str]], argparse.ArgumentParser]
) -> int:
    if args.list_sessions:
        try:
            with open_client(args.workspace, socket_path(args)) as client:
                ids = [s.id for s in client.list_sessions("", 1000)]
        except SessiondError:
            return EXIT_OK  # no daemon: nothing to offer, and nothing to say in the middle of a command line
        sys.stdout.write("".join(visible(i) + "\n" for i in ids))
        return EXIT_OK
    if args.shell is None:
        return report_error(args, "name a shell: bash, zsh or fish", reason="USAGE", code=EXIT_USAGE)
    sys.stdout.write(completion_script(build_parser({}), args.shell))  # no environment: no defaults from it
    return EXIT_OK


def completion_command(build_parser: Callable[[Mapping[str, str]], argparse.ArgumentParser]) -> Command:
    """The ``completion`` subcommand; its scripts come from ``build_parser({})`` (the CLI's own parser)."""
    return Command(
        "completion",
        "print a shell completion script (bash, zsh or fish)",
        _completion_args,
        functools.partial(_completion, build_parser=build_parser),
    )

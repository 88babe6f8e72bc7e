"""The README's "Command line" section names every command and every option the parser
takes, so an option cannot ship that a newcomer reading the README would never learn of (a
read of the README against the code found nine missing, issue 31)."""

import argparse
import re
from pathlib import Path

from langchef_pipeline.cli import build_parser

README = Path(__file__).resolve().parents[2] / "README.md"


def command_line_section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("\n## Command line\n")
    return text[start:text.index("\n## ", start + 1)]


def commands(parser: argparse.ArgumentParser, path=()):
    """Each command a person types (`design check`, not `design`) with its own parser."""
    groups = [action for action in parser._actions
              if isinstance(action, argparse._SubParsersAction)]
    if not groups:
        yield " ".join(path), parser
    for group in groups:
        for name, subparser in group.choices.items():
            yield from commands(subparser, (*path, name))


def options(parser: argparse.ArgumentParser) -> set[str]:
    return {flag for action in parser._actions for flag in action.option_strings
            if flag.startswith("--") and flag != "--help"}


def named(option: str, text: str) -> bool:
    return re.search(re.escape(option) + r"(?![\w-])", text) is not None


def test_the_readme_names_every_command_and_option_of_the_command_line():
    section = command_line_section()
    found = list(commands(build_parser()))
    assert len(found) >= 12  # the walk reached the nested commands
    missing = [f"langchef {name}" for name, _ in found if f"langchef {name}" not in section]
    missing += [f"langchef {name} {option}" for name, parser in found
                for option in sorted(options(parser)) if not named(option, section)]
    assert missing == [], "README 'Command line' does not name: " + ", ".join(missing)


def test_the_check_reports_an_option_the_readme_lacks():
    parser = argparse.ArgumentParser()
    parser.add_argument("--not-in-the-readme")
    section = command_line_section()
    assert options(parser) == {"--not-in-the-readme"} and not named("--not-in-the-readme", section)
    assert named("--verify-key", section) and not named("--verify", section)  # whole options only

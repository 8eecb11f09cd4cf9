"""Options that several commands share, so that their help reads the same everywhere."""

from __future__ import annotations

import argparse


def add_results_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--results-dir", metavar="DIR",
                        help="override results_dir from the configuration")


def command_group(subparsers, name: str, help: str):  # noqa: A002  (argparse's word)
    """``nsb NAME ACTION``: a command whose actions are required subcommands; returns
    the subparsers to add the actions to."""
    group = subparsers.add_parser(name, help=help)
    actions = group.add_subparsers(dest=f"{name}_command", metavar="ACTION")
    actions.required = True
    return actions

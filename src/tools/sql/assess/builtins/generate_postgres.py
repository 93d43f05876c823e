#!/usr/bin/env python3
"""Writes postgres.txt and postgres.keywords.txt from PostgreSQL's own catalogue.

The read-only function list is not written by hand: a name is listed when every function
of that name in pg_catalog is IMMUTABLE or STABLE (PostgreSQL's contract: such functions
cannot modify the database) in every source read, plus the reviewed additions of
postgres.allow.txt, less the reviewed exceptions of postgres.deny.txt. The sources are

  - a PostgreSQL source tree's src/include/catalog/pg_proc.dat (the newest release at
    hand; `provolatile` defaults to 'i' there, see pg_proc.h's BKI_DEFAULT), and
  - a live server's pg_proc (the oldest version the bot is run against), which also has
    the functions that SQL scripts create at initdb and that pg_proc.dat does not list.

The keyword file classifies the words of PostgreSQL's grammar, from the same tree's
src/include/parser/kwlist.h and the live server's pg_get_keywords(), for the token reader
(by_tokens.rs), which must know which words can never name a function.

Usage (the server must be reachable with psql; nothing is written elsewhere):

  generate_postgres.py --source-tree DIR --dsn postgres://postgres@127.0.0.1:5432/test

DIR only needs the two files above and configure.ac (for the version), at their paths
in the tree. The script prints every name it adds to or removes from the current
postgres.txt, for review.
"""

import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def parse_pg_proc_dat(text):
    """The (proname, provolatile, prokind) of every entry of pg_proc.dat."""
    entries = []
    index, length = 0, len(text)
    while index < length:
        char = text[index]
        if char == "#":
            index = text.find("\n", index)
            if index < 0:
                break
            continue
        if char != "{":
            index += 1
            continue
        # One entry: `{ key => 'value', ... }`; values are single-quoted with \' escapes
        # and may hold braces.
        end, quoted = index + 1, False
        while end < length:
            if quoted:
                if text[end] == "\\":
                    end += 1
                elif text[end] == "'":
                    quoted = False
            elif text[end] == "'":
                quoted = True
            elif text[end] == "}":
                break
            end += 1
        body = text[index + 1 : end]
        fields = dict(re.findall(r"(\w+)\s*=>\s*'((?:[^'\\]|\\.)*)'", body))
        if "proname" not in fields:
            sys.exit(f"pg_proc.dat entry without proname near offset {index}")
        entries.append(
            (
                fields["proname"],
                fields.get("provolatile", "i"),
                fields.get("prokind", "f"),
                fields.get("pronamespace", "pg_catalog"),
            )
        )
        index = end + 1
    return entries


def psql(dsn, query):
    result = subprocess.run(
        ["psql", dsn, "-AtX", "-F", "\t", "-c", query],
        check=True,
        capture_output=True,
        text=True,
    )
    return [line.split("\t") for line in result.stdout.splitlines() if line]


def read_list(name):
    """The names of a reviewed data file: one a line, `#` starts a comment."""
    names = set()
    with open(os.path.join(HERE, name), encoding="utf-8") as file:
        for line in file:
            word = line.split("#", 1)[0].strip()
            if word:
                names.add(word)
    return names


def parse_kwlist(text):
    categories = {
        "UNRESERVED": "unreserved",
        "COL_NAME": "col_name",
        "TYPE_FUNC_NAME": "type_func_name",
        "RESERVED": "reserved",
    }
    return {
        word: categories[category]
        for word, category in re.findall(
            r'PG_KEYWORD\("([^"]+)",\s*\w+,\s*(\w+)_KEYWORD', text
        )
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source-tree", required=True)
    parser.add_argument("--dsn", required=True)
    args = parser.parse_args()

    with open(
        os.path.join(args.source_tree, "src/include/catalog/pg_proc.dat"), encoding="utf-8"
    ) as file:
        dat = parse_pg_proc_dat(file.read())
    with open(os.path.join(args.source_tree, "configure.ac"), encoding="utf-8") as file:
        source_version = re.search(r"AC_INIT\(\[PostgreSQL\], \[([^\]]+)\]", file.read())
    source_version = source_version.group(1) if source_version else "unknown"
    live_version = psql(args.dsn, "SHOW server_version")[0][0]
    live = psql(
        args.dsn,
        "SELECT proname, provolatile, prokind FROM pg_proc "
        "WHERE pronamespace = 'pg_catalog'::regnamespace",
    )

    # name -> set of volatilities over every overload in every source; procedures
    # (prokind 'p') cannot be called from a query and are left out.
    volatility = {}
    for name, volatile, kind, namespace in dat:
        if namespace == "pg_catalog" and kind != "p":
            volatility.setdefault(name, set()).add(volatile)
    for name, volatile, kind in live:
        if kind != "p":
            volatility.setdefault(name, set()).add(volatile)
    read_only = {name for name, kinds in volatility.items() if kinds <= {"i", "s"}}

    allow, deny = read_list("postgres.allow.txt"), read_list("postgres.deny.txt")
    overlap = allow & deny
    if overlap:
        sys.exit(f"names in both postgres.allow.txt and postgres.deny.txt: {sorted(overlap)}")
    listed = (read_only | allow) - deny

    target = os.path.join(HERE, "postgres.txt")
    old = read_list("postgres.txt") if os.path.exists(target) else set()
    for name in sorted(old - listed):
        why = "deny list" if name in deny else (
            "a VOLATILE overload" if name in volatility else "in neither catalogue"
        )
        print(f"removed: {name} ({why})", file=sys.stderr)
    for name in sorted(listed - old):
        print(f"added: {name}", file=sys.stderr)

    with open(target, "w", encoding="utf-8") as out:
        out.write(
            f"""# PostgreSQL built-in functions that may run without a person's click. Generated by
# generate_postgres.py (beside this file; do not edit by hand) from PostgreSQL
# {source_version}'s src/include/catalog/pg_proc.dat and the pg_catalog of a live PostgreSQL
# {live_version}: every name whose every function, in both, is IMMUTABLE or STABLE (such
# functions cannot modify the database, by PostgreSQL's own contract), plus the reviewed
# names of postgres.allow.txt (VOLATILE functions that only compute, and SQL's own
# function-like syntax), less the reviewed names of postgres.deny.txt (stable functions
# that write or escape the walls). The side-effect list in functions.rs is checked first,
# so a name there is never safe even if it is here. One name a line.
"""
        )
        for name in sorted(listed):
            out.write(name + "\n")

    newest = parse_kwlist(
        open(
            os.path.join(args.source_tree, "src/include/parser/kwlist.h"), encoding="utf-8"
        ).read()
    )
    codes = {"U": "unreserved", "C": "col_name", "T": "type_func_name", "R": "reserved"}
    oldest = {word: codes[code] for word, code in psql(args.dsn, "SELECT word, catcode FROM pg_get_keywords()")}
    grammar = {"col_name", "reserved"}
    with open(os.path.join(HERE, "postgres.keywords.txt"), "w", encoding="utf-8") as out:
        out.write(
            f"""# The words of PostgreSQL's grammar, for the token reader (by_tokens.rs). Generated by
# generate_postgres.py from PostgreSQL {source_version}'s src/include/parser/kwlist.h and
# pg_get_keywords() of a live PostgreSQL {live_version}; do not edit by hand.
#   syntax   reserved or column-name keyword in both: unquoted, never a function's name,
#            so `word(` is the grammar's own construct (IN, CAST, COALESCE, XMLTABLE)
#   newer    such a keyword in {source_version} only: on older servers `word(` calls a
#            function of that name (JSON_VALUE, JSON_TABLE, ...)
#   name     any other keyword: it may name a function or a column
"""
        )
        for word in sorted(set(newest) | set(oldest)):
            if newest.get(word) in grammar and oldest.get(word) in grammar:
                kind = "syntax"
            elif newest.get(word) in grammar:
                kind = "newer"
            else:
                kind = "name"
            out.write(f"{word} {kind}\n")


if __name__ == "__main__":
    main()

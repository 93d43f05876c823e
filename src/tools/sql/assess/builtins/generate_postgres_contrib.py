#!/usr/bin/env python3
"""Writes postgres.contrib.txt from PostgreSQL's own catalogue: the functions of the
extensions that ship with PostgreSQL (contrib) that may run without a person's click.

A name is listed when every function of that name that one of the extensions below
creates is IMMUTABLE or STABLE (PostgreSQL's contract: such functions cannot modify the
database), less the reviewed exceptions of postgres.contrib.deny.txt (functions that run
SQL given as text, reach other servers or files, or read what a read-only query should
not). Names that pg_catalog already has are left out: postgres.txt decides those.

The extensions are installed into a scratch schema of a scratch database, which the
script drops again; the server must have them (Debian's postgresql-NN package does).

Usage (the server must be reachable with psql as a superuser; nothing is written
elsewhere):

  generate_postgres_contrib.py --dsn postgres://postgres@127.0.0.1:5432/test

It prints every name it adds to or removes from the current postgres.contrib.txt, for
review.
"""

import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# The contrib extensions whose functions compute on their own types or read statistics.
# Left out on purpose: dblink, postgres_fdw and file_fdw (other servers, files), adminpack
# (writes server files), pg_surgery (destroys tuples), pg_prewarm (loads buffers),
# lo/refint/autoinc/insert_username/moddatetime/tcn (trigger functions), uuid-ossp
# (volatile generators), old_snapshot and sslinfo (nothing a query needs), plpgsql.
EXTENSIONS = [
    "btree_gin", "btree_gist", "citext", "cube", "dict_int", "dict_xsyn", "earthdistance",
    "fuzzystrmatch", "hstore", "intagg", "intarray", "isn", "ltree", "pg_trgm", "pgcrypto",
    "seg", "tablefunc", "tsm_system_rows", "tsm_system_time", "unaccent", "xml2",
    "amcheck", "bloom", "pageinspect", "pg_buffercache", "pg_freespacemap", "pg_visibility",
    "pg_walinspect", "pgrowlocks", "pgstattuple", "pg_stat_statements",
]

SCRATCH = "riskgate_contrib_scratch"


def psql(dsn, query):
    out = subprocess.run(
        ["psql", dsn, "-AtX", "-v", "ON_ERROR_STOP=1", "-F", "\t", "-c", query],
        check=True, capture_output=True, text=True,
    ).stdout
    return [line.split("\t") for line in out.splitlines() if line]


def read_list(name):
    path = os.path.join(HERE, name)
    if not os.path.exists(path):
        return set()
    with open(path) as f:
        return {
            line.strip() for line in f if line.strip() and not line.startswith("#")
        }


def with_database(dsn, name):
    base, _, _ = dsn.rpartition("/")
    return f"{base}/{name}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dsn", required=True)
    args = parser.parse_args()

    version = psql(args.dsn, "SHOW server_version")[0][0]
    psql(args.dsn, f"DROP DATABASE IF EXISTS {SCRATCH}")
    psql(args.dsn, f"CREATE DATABASE {SCRATCH}")
    scratch = with_database(args.dsn, SCRATCH)
    try:
        for extension in EXTENSIONS:
            psql(scratch, f'CREATE EXTENSION IF NOT EXISTS "{extension}" CASCADE')
        rows = psql(scratch, """
            SELECT lower(p.proname), p.provolatile, p.prokind
            FROM pg_proc p
            JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
                AND d.deptype = 'e'
            JOIN pg_extension e ON e.oid = d.refobjid
        """)
        catalog = {name for (name,) in psql(scratch, """
            SELECT DISTINCT lower(proname) FROM pg_proc
            WHERE pronamespace = 'pg_catalog'::regnamespace
        """)}
    finally:
        psql(args.dsn, f"DROP DATABASE IF EXISTS {SCRATCH}")

    volatility = {}
    for name, volatile, kind in rows:
        # Procedures run with CALL, never inside a query.
        if kind == "p":
            continue
        volatility.setdefault(name, set()).add(volatile)
    deny = read_list("postgres.contrib.deny.txt")
    listed = sorted(
        name for name, kinds in volatility.items()
        if kinds <= {"i", "s"} and name not in deny and name not in catalog
    )

    before = read_list("postgres.contrib.txt")
    for name in sorted(set(listed) - before):
        print(f"+ {name}")
    for name in sorted(before - set(listed)):
        why = "deny list" if name in deny else "volatile, gone, or in pg_catalog"
        print(f"- {name} ({why})")

    header = f"""# The functions of PostgreSQL's contrib extensions that may run without a person's click,
# written by generate_postgres_contrib.py from PostgreSQL {version}'s catalogue: every
# function of the name that the extensions {", ".join(EXTENSIONS)}
# create is IMMUTABLE or STABLE, less the reviewed exceptions of postgres.contrib.deny.txt
# and the names pg_catalog has (postgres.txt decides those). Read unqualified only: a name
# qualified by a schema is not known to be the extension's. Do not edit by hand.
"""
    with open(os.path.join(HERE, "postgres.contrib.txt"), "w") as f:
        f.write(header)
        for name in listed:
            f.write(name + "\n")
    print(f"{len(listed)} names written", file=sys.stderr)


if __name__ == "__main__":
    main()

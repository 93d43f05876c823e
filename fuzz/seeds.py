#!/usr/bin/env python3
"""Writes seed corpora for the fuzz targets from the labelled tool calls in
tests/data/risk_cases.jsonl, into fuzz/corpus/<target>/ (gitignored), plus the kept
regression inputs of tests/data/fuzz/<target>/.

- shell_assess: every `execute_command` line.
- sql_assess: every `execute_sql` text, once per dialect (the first byte picks the dialect:
  '0' PostgreSQL, '1' MySQL, '2' SQLite, as in tests/fuzz_checks/mod.rs).
- json_protocol: every case as a JSON-protocol reply, in the shapes models write: a json
  code fence with prose around it, inline in prose, bare, two calls in one reply.

Files are named by the SHA-1 of their content, as libFuzzer names its own, so running this
again adds nothing twice. Usage: python3 fuzz/seeds.py (from anywhere).
"""

import hashlib
import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
CASES = ROOT / "tests" / "data" / "risk_cases.jsonl"
CORPUS = ROOT / "fuzz" / "corpus"
KEPT = ROOT / "tests" / "data" / "fuzz"
DIALECT_BYTE = {"postgres": "0", "mysql": "1", "sqlite": "2"}


def write(target, data):
    directory = CORPUS / target
    directory.mkdir(parents=True, exist_ok=True)
    (directory / hashlib.sha1(data).hexdigest()).write_bytes(data)


def reply_shapes(index, case, other):
    call = {"tool": case["tool"], "parameters": case["arguments"], "terminate": index % 5 == 0}
    compact = json.dumps(call, ensure_ascii=False)
    pretty = json.dumps(call, ensure_ascii=False, indent=2)
    second = json.dumps({"tool": other["tool"], "parameters": other["arguments"]})
    shapes = [
        f"I'll check that.\n```json\n{pretty}\n```\n",
        f"Sure: {compact} and then I will report back.",
        compact,
        f"```json\n{compact}\n```\nThen:\n```json\n{second}\n```",
    ]
    # Two shapes per case keep the corpus modest; the fuzzer finds the rest.
    return shapes[index % 4], shapes[(index + 1) % 4]


def main():
    cases = [json.loads(line) for line in CASES.read_text(encoding="utf-8").splitlines() if line.strip()]
    counts = {}
    for index, case in enumerate(cases):
        arguments = case["arguments"]
        if case["tool"] == "execute_command":
            write("shell_assess", arguments["command"].encode())
            counts["shell_assess"] = counts.get("shell_assess", 0) + 1
        if case["tool"] == "execute_sql":
            for byte in DIALECT_BYTE.values():
                write("sql_assess", (byte + arguments["sql"]).encode())
                counts["sql_assess"] = counts.get("sql_assess", 0) + 1
        for text in reply_shapes(index, case, cases[(index + 7) % len(cases)]):
            write("json_protocol", text.encode())
            counts["json_protocol"] = counts.get("json_protocol", 0) + 1
    for target_dir in sorted(KEPT.iterdir()) if KEPT.is_dir() else []:
        for kept in sorted(target_dir.iterdir()):
            write(target_dir.name, kept.read_bytes())
            counts[target_dir.name] = counts.get(target_dir.name, 0) + 1
    for target, count in sorted(counts.items()):
        print(f"seeds: {count} inputs for {target} in {CORPUS / target}")


if __name__ == "__main__":
    main()

"""The live cross-checks' figures, written by the scripts themselves.

A cross-check script run with `--record` stores what it compared in docs/crosschecks.json (one
entry per script: the date, the peers and their versions, the seed and options, and per row the
values and blocks compared and the differences), then writes docs/crosschecks.md, the table the
docs quote between their `<!-- crosschecks:begin -->` and `<!-- crosschecks:end -->` lines
(tests/doc_links.rs fails when the quote and the file disagree). Nothing here is typed by hand.
"""
import datetime
import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
JSON = ROOT / "docs" / "crosschecks.json"
TABLE = ROOT / "docs" / "crosschecks.md"

HEADER = """# Live cross-checks

Written by the cross-check scripts run with `--record` (`scripts/crosscheck_record.py`), from
docs/crosschecks.json; do not edit by hand. Every value is compared bit for bit (NaN codes, NaN
payloads and the sign of zero included); a row fails on any difference and when it compared
nothing.

"""


def record(script, peers, seed, options, rows):
    """Stores one script's run. `peers`: {name: version}; `rows`: a list of dicts with `what`,
    `compared`, `differences` and optionally `blocks`. Refuses an empty run."""
    if not rows or sum(r["compared"] for r in rows) == 0:
        raise SystemExit(f"{script}: nothing compared, nothing recorded")
    runs = json.loads(JSON.read_text())["runs"] if JSON.exists() else {}
    runs[script] = {
        "date": datetime.date.today().isoformat(),
        "peers": dict(sorted(peers.items())),
        "seed": seed,
        "options": options,
        "rows": [{"what": r["what"], "compared": int(r["compared"]), "blocks": r.get("blocks"),
                  "differences": int(r["differences"])} for r in rows],
    }
    JSON.write_text(json.dumps({"runs": dict(sorted(runs.items()))}, indent=1) + "\n")
    TABLE.write_text(render(runs))
    print(f"recorded {len(rows)} rows of {script} in {JSON.relative_to(ROOT)} and {TABLE.relative_to(ROOT)}")


def render(runs):
    """docs/crosschecks.md from the stored runs: per script its peers and run, then its rows."""
    lines = [HEADER.rstrip("\n")]
    for script, run in runs.items():
        peers = ", ".join(f"{k} {v}".strip() for k, v in run["peers"].items())
        options = f", `{run['options']}`" if run["options"] else ""
        where = "scripts/" + script
        lines += ["", f"`{where}` against {peers}; run {run['date']}, seed {run['seed']}{options}:", "",
                  "| compared | values | blocks | differences |", "|---|---:|---:|---:|"]
        for r in run["rows"]:
            blocks = "" if r["blocks"] is None else f"{r['blocks']:,}"
            lines.append(f"| {r['what']} | {r['compared']:,} | {blocks} | {r['differences']:,} |")
    return "\n".join(lines) + "\n"


def quote(path):
    """Copies docs/crosschecks.md below its title between the markers of `path` (the README or
    the guide's chapter that quotes it), as tests/doc_links.rs checks."""
    doc = pathlib.Path(path)
    text = doc.read_text()
    begin, end = "<!-- crosschecks:begin -->", "<!-- crosschecks:end -->"
    if text.count(begin) != 1 or text.count(end) != 1:
        raise SystemExit(f"{path}: needs one {begin} and one {end}")
    head, rest = text.split(begin)
    _, tail = rest.split(end)
    body = TABLE.read_text().split("\n", 1)[1].strip()
    doc.write_text(f"{head}{begin}\n{body}\n{end}{tail}")
    print(f"{path}: quotes {TABLE.relative_to(ROOT)}")


if __name__ == "__main__":
    import sys

    if len(sys.argv) != 3 or sys.argv[1] != "--quote":
        raise SystemExit("usage: python3 scripts/crosscheck_record.py --quote FILE (the document that quotes the figures)")
    quote(sys.argv[2])

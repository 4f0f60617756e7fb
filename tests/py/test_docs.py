"""The documentation: every relative link and #anchor in README.md and
docs/*.md resolves, and the README's examples run.

The README's fenced blocks run in order in one empty folder, as a reader
pasting them into one terminal would: `sh` blocks in bash (the variables one
exports carry over to the next), `python` blocks in this interpreter with the
package under test on its path, and `sql` blocks one statement at a time
through `timelake sql`. A ```text block right after `<!-- output -->` is what
the block before it prints. A block that needs what this test cannot give (a
bucket, a server that keeps running) has `<!-- not run: why -->` right before
it, and is reported here as a skipped test with that reason. A block with
`<!-- run with: s3 -->` before it runs against moto's S3 server, started for
it, holding the bucket `bucket`, with the endpoint and credentials in the
environment (`AWS_ENDPOINT_URL_S3`, `AWS_ACCESS_KEY_ID`, ...), as a reader's
shell would hold theirs."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("TL_BUILD", ROOT / "build-asan")).resolve()
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
RUNNERS = ("sh", "python", "sql")
PASTEABLE = (*RUNNERS, "c")  # a reader pastes these; each runs or says why not

FENCE = re.compile(r"^(\s*)```(\S*)\s*$")
NOTE = re.compile(r"^<!--\s*(not run:.*?|output|run with: s3)\s*-->\s*$")


class Block:
    def __init__(self, lang, code, line, note):
        self.lang, self.code, self.line, self.note = lang, code, line, note

    def __repr__(self):
        return f"README.md:{self.line} ({self.lang})"


def fenced_blocks(text):
    """The fenced blocks of a Markdown text, each with the HTML comment (if
    any) on the line before it, blank lines aside."""
    blocks, lines, i = [], text.split("\n"), 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang, start = len(m.group(1)), m.group(2), i
        j = i + 1
        while j < len(lines) and not FENCE.match(lines[j]):
            j += 1
        code = "\n".join(line[indent:] for line in lines[i + 1:j]) + "\n"
        k = start - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        note = NOTE.match(lines[k].strip()) if k >= 0 else None
        blocks.append(Block(lang, code, start + 1, note.group(1) if note else None))
        i = j + 1
    return blocks


# --- links ------------------------------------------------------------------


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation but `-` and `_`
    dropped, spaces to dashes."""
    text = re.sub(r"`|\*\*|\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip()).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path):
    """Every anchor a Markdown file defines (headings outside code blocks,
    repeated ones numbered as GitHub numbers them)."""
    seen, found, in_code = {}, set(), False
    for line in path.read_text().split("\n"):
        if FENCE.match(line):
            in_code = not in_code
            continue
        m = re.match(r"^#{1,6} (.*)$", line)
        if m and not in_code:
            a = slug(m.group(1))
            n = seen.get(a, 0)
            seen[a] = n + 1
            found.add(a if n == 0 else f"{a}-{n}")
    return found


def links(path):
    """(line, target) of every Markdown link outside code blocks and spans."""
    out, in_code = [], False
    for no, line in enumerate(path.read_text().split("\n"), 1):
        if FENCE.match(line):
            in_code = not in_code
            continue
        if in_code:
            continue
        line = re.sub(r"`[^`]*`", "", line)
        out += [(no, m.group(1)) for m in re.finditer(r"\]\(([^)\s]+)\)", line)]
    return out


def broken_links(paths):
    problems = []
    for path in paths:
        for no, target in links(path):
            if re.match(r"^[a-z]+:", target):
                continue  # http(s), mailto: not checked here
            file, _, frag = target.partition("#")
            dest = (path.parent / file).resolve() if file else path
            where = f"{os.path.relpath(path, ROOT)}:{no}: {target}"
            if not dest.exists():
                problems.append(f"{where}: no such file")
            elif frag and (dest.suffix != ".md" or frag not in anchors(dest)):
                problems.append(f"{where}: no such anchor")
    return problems


def test_every_link_resolves():
    assert DOCS[1:], "docs/ has no pages"
    assert broken_links(DOCS) == []


def test_the_link_check_catches_a_broken_link(tmp_path):
    page = tmp_path / "a.md"
    (tmp_path / "b.md").write_text("# B\n\n## Here `it` is\n")
    page.write_text("# A\n[ok](b.md#here-it-is) [self](#a) [gone](c.md) [typo](b.md#here) "
                    "`[in code](x.md)`\n```\n[in a block](y.md)\n```\n")
    assert [p.split(": ", 1)[1] for p in broken_links([page])] == ["c.md: no such file", "b.md#here: no such anchor"]


# --- the README's examples --------------------------------------------------

README_BLOCKS = fenced_blocks((ROOT / "README.md").read_text())


def runs_and_outputs(blocks):
    """The blocks to run, each with the output it shows (or None), and the
    ones marked not run; fails on a pasteable block that says neither."""
    runs, skipped, problems = [], [], []
    for b in blocks:
        if b.note and b.note.startswith("not run:"):
            skipped.append(b)
        elif b.note == "output":
            if b.lang != "text" or not runs or runs[-1][1] is not None:
                problems.append(f"{b}: an output block follows no block that runs")
            else:
                runs[-1] = (runs[-1][0], b.code)
        elif b.lang in RUNNERS and b.note in (None, "run with: s3"):
            runs.append((b, None))
        elif b.lang in PASTEABLE:
            problems.append(f"{b}: a {b.lang} block neither runs nor says why not")
    assert problems == []
    return runs, skipped


def block_env(folder):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TIMELAKE_", "KARET_", "AWS_"))}
    env["PATH"] = f"{BUILD}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(BUILD / "python")
    env["HOME"] = str(folder / "home")
    return env


def sql_statements(code):
    """The statements of a sql block (split at a `;` ending a line), comments
    kept, blocks of comments alone dropped."""
    parts = re.split(r";[ \t]*(?:\n|$)", code)
    return [p for p in parts if any(l.strip() and not l.strip().startswith("--") for l in p.split("\n"))]


def run_block(block, folder, env):
    """Runs one block in folder, in a shell holding what the blocks before
    exported; returns (ok, what it printed, its errors)."""
    state = folder / ".exported"
    restore = f"[ -f {state} ] && . {state}\n"
    if block.lang == "sh":
        save = f"export -p | grep -v -E '^declare -x (PWD|OLDPWD|SHLVL|_)=' > {state}\n"
        steps = [(restore + "set -eo pipefail\n" + block.code + "\n" + save, None)]
    elif block.lang == "python":
        steps = [(restore + f"exec {sys.executable} -", block.code)]
    else:  # sql: one `timelake sql` a statement, in the lake the shell exported
        steps = [(restore + "exec timelake sql -", stmt) for stmt in sql_statements(block.code)]
    out, err = "", ""
    for script, stdin in steps:
        p = subprocess.run(["bash", "-c", script], cwd=folder, env=env, input=stdin, capture_output=True, text=True,
                           timeout=120)
        out, err = out + p.stdout, err + p.stderr
        if p.returncode:
            return False, out, err
    return True, out, err


def tidy(text):
    return "\n".join(line.rstrip() for line in text.strip("\n").split("\n"))


def same_output(got, shown):
    return tidy(got) == tidy(shown)


def s3_env(env, log_dir):
    """moto's S3 server with the bucket `bucket`, and env plus what a reader's
    shell would hold for it; returns (server, env)."""
    import urllib.request

    from store_servers import start_moto

    proc, backend = start_moto(log_dir)
    urllib.request.urlopen(urllib.request.Request(f"{backend.endpoint}/bucket", method="PUT"))
    return proc, {**env, "AWS_ENDPOINT_URL_S3": backend.endpoint, "AWS_ALLOW_HTTP": "true",
                  "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}


def run_readme_block(block, shown, tmp_path, env):
    ok, out, err = run_block(block, tmp_path, env)
    assert ok, f"{block} failed:\n{block.code}\n--- stdout\n{out}\n--- stderr\n{err}"
    if shown is not None:
        assert same_output(out, shown), f"{block} printed\n{out}\nwhere the README shows\n{shown}"


def test_readme_examples_run(tmp_path):
    from store_servers import stop

    runs, _ = runs_and_outputs(README_BLOCKS)
    assert len(runs) >= 10, "the README's examples went missing"
    assert any(b.note == "run with: s3" for b, _ in runs), "the README's S3 example went missing"
    (tmp_path / "home").mkdir()
    env = block_env(tmp_path)
    s3 = None
    try:
        for block, shown in runs:
            if block.note == "run with: s3" and s3 is None:
                s3 = s3_env(env, tmp_path)
            run_readme_block(block, shown, tmp_path, s3[1] if block.note else env)
    finally:
        if s3:
            stop(s3[0])


@pytest.mark.parametrize("block", runs_and_outputs(README_BLOCKS)[1], ids=repr)
def test_readme_example_not_run(block):
    pytest.skip(f"{block} {block.note}")


def test_the_runner_catches_a_failing_or_wrong_example(tmp_path):
    (tmp_path / "home").mkdir()
    env = block_env(tmp_path)
    text = ("```sh\nexport GREETING=hello TIMELAKE_WAREHOUSE=./lake\n```\n\n"
            "```sh\necho $GREETING\n```\n\n<!-- output -->\n```text\nhello\n```\n"
            "```python\nimport os\nprint(os.environ['GREETING'], 2 + 2)\n```\n<!-- output -->\n```text\nhello 4\n```\n"
            "```sql\n-- one\nSELECT 1 AS x;\nSELECT 'a;b' AS y;\n```\n<!-- output -->\n```text\nx\n1\ny\na;b\n```\n"
            "```python\nprint(2 + 2)\n```\n<!-- output -->\n```text\n5\n```\n"
            "```sh\ntrue\nfalse\necho unreachable\n```\n"
            "```python\nraise SystemExit(3)\n```\n"
            "```sql\nSELECT 1;\nSELECT * FROM no_such_table;\n```\n"
            "<!-- not run: needs the moon -->\n```sh\nexit 1\n```\n")
    runs, skipped = runs_and_outputs(fenced_blocks(text))
    results = []
    for block, shown in runs:
        ok, out, _ = run_block(block, tmp_path, env)
        results.append(ok and (shown is None or same_output(out, shown)))
    assert results == [True, True, True, True, False, False, False, False]
    assert [b.note for b in skipped] == ["not run: needs the moon"]
    with pytest.raises(AssertionError):
        runs_and_outputs(fenced_blocks("```c\nint x;\n```\n"))
    assert sql_statements("-- a\nSELECT 1;\n-- b\nSELECT 2 AS x;\n-- only a comment\n") == ["-- a\nSELECT 1",
                                                                                            "-- b\nSELECT 2 AS x"]

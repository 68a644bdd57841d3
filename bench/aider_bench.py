#!/usr/bin/env python3
"""Aider's benchmark loop on exercises in the Exercism layout, as
benchmark/benchmark.py (run_test_real) of aider-chat runs it, measured the way
bench/bench-aider.sh compares it with `lemmings eval`.

For each exercise: the instructions (.docs/introduction.md, instructions.md,
instructions.append.md) with Aider's addendum go to a Coder holding the
solution files; the tests (restored from the original) run; when they fail,
their output with Aider's "test failures" prompt goes back once (tries=2).
Every model call is counted and timed at Model.send_completion.

Each attempt is capped at --wall seconds (a timer interrupts the call in
flight; the attempt counts as failed). The model gets a fixed context window
(--context, sent as num_ctx) so that Ollama does not reload it whenever Aider's
estimate of the prompt changes, the edit format --edit-format ("whole", as
Aider's benchmark uses for small models) and temperature 0 (Aider's default).

A task from real history (a folder with task.json, docs/eval.md) is run as
Aider's users run it on their own repository: the base cloned from its bundle,
the remit as the message, Aider's repository map on, and --files deciding what
is in the chat: "real" adds the files the real change touched (as a user adds
files by hand), "none" adds nothing (the repository map alone; the files Aider
then asks for are added, as its users answer yes). The judge is lemmings
eval's: the answer copied to a clean folder, the base's test files put back,
the held-back tests added, the task's test command run. A second try is made
only when the repository's own tests (without the held-back ones) fail, and is
shown their output alone.

Usage: aider_bench.py --model ollama_chat/qwen05 --out DIR [--files real|none] EXERCISE_OR_TASK_DIR...
(OLLAMA_API_BASE points at the server). Writes DIR/aider.json.
"""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import io as _io
import time
from fnmatch import fnmatch
from pathlib import Path, PurePosixPath

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no download at import

from aider import __version__, models  # noqa: E402
from aider.coders import Coder  # noqa: E402
from aider.io import InputOutput  # noqa: E402
from aider.repo import GitRepo  # noqa: E402

# The two prompts of Aider's benchmark/prompts.py (not in the wheel), word for word.
INSTRUCTIONS_ADDENDUM = """
####

Use the above instructions to modify the supplied files: {file_list}
Don't change the names of existing functions or classes, as they may be referenced from other code like unit tests, etc.
Only use standard libraries, don't suggest installing any packages.
"""

TEST_FAILURES = """
####

See the testing errors above.
The tests are correct, don't try and change them.
Fix the code in {file_list} to resolve the errors.
"""

# The test commands lemmings eval uses (eval/language.go), so both harnesses
# are judged by the same runs.
TEST_COMMANDS = {
    ".go": ["go", "test", "-count=1", "./..."],
    ".py": ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider"],
}


class Meter:
    """Counts and times the model calls of one exercise, and gives each call what is left of
    its attempt's wall as litellm's request timeout: a request abandoned by a signal stays open
    (litellm waits 600 s) and the one-slot server keeps generating for it while later requests
    queue behind; a request that times out itself closes its connection, and Ollama stops."""

    def __init__(self):
        self.calls = 0
        self.seconds = 0.0
        self.deadline = None

    def wrap(self, model):
        send = model.send_completion

        def timed(*args, **kwargs):
            start = time.monotonic()
            if self.deadline is not None:
                model.extra_params["timeout"] = max(1.0, self.deadline - start)
            try:
                return send(*args, **kwargs)
            finally:
                self.calls += 1
                self.seconds += time.monotonic() - start

        model.send_completion = timed


def offline_model_info(name, context):
    """Aider looks models up in a JSON file it downloads: give it the facts."""
    models.model_info_manager._update_cache = lambda: None
    models.model_info_manager.content = {}
    models.model_info_manager.local_model_metadata[name] = {
        "max_input_tokens": context,
        "max_tokens": context,
        "max_output_tokens": context,
        "input_cost_per_token": 0,
        "output_cost_per_token": 0,
        "litellm_provider": name.split("/")[0],
        "mode": "chat",
    }


ALARM_GRACE = 20


class WallTime(BaseException):
    """An attempt ran out of its --wall seconds (a BaseException: Aider's handlers of Exception must not swallow it)."""


def on_alarm(signum, frame):
    raise WallTime()


def cleanup_test_output(output, testdir):
    # Aider drops timings and the folder so the model sees the same text.
    res = re.sub(r"\bin \d+\.\d+s\b", "", output)
    return res.replace(str(testdir), testdir.name)


def run_tests(original, testdir, test_files, timeout):
    for f in test_files:
        shutil.copy(original / f, testdir / f)
    ext = {Path(f).suffix for f in test_files}
    command = next(TEST_COMMANDS[e] for e in ext if e in TEST_COMMANDS)
    try:
        r = subprocess.run(command, cwd=testdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=timeout, errors="replace")
    except subprocess.TimeoutExpired:
        return "Tests timed out!"
    if r.returncode == 0:
        return None
    return cleanup_test_output(r.stdout, testdir)


def one(original, work, model_name, tries, timeout, wall, edit_format, context):
    cfg = json.loads((original / ".meta" / "config.json").read_text())
    files = cfg.get("files", {})
    test_files, solution = files.get("test", []), files.get("solution", [])
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(original, work, ignore=shutil.ignore_patterns(".meta"))
    for p in work.rglob("*.txt"):  # lemmings' embedded suite keeps go.mod as go.mod.txt
        if p.name == "go.mod.txt":
            p.rename(p.with_name("go.mod"))
    fnames = [work / f for f in solution]
    file_list = " ".join(f.name for f in fnames)

    instructions = ""
    for name in ("introduction.md", "instructions.md", "instructions.append.md"):
        p = work / ".docs" / name
        if p.exists():
            instructions += p.read_text()
    instructions += INSTRUCTIONS_ADDENDUM.format(file_list=file_list)

    io = InputOutput(pretty=False, yes=True, chat_history_file=work / ".aider.chat.history.md")
    main_model = models.Model(model_name)
    main_model.edit_format = edit_format
    # A fixed window: Aider sizes num_ctx for Ollama from each prompt otherwise, and every new
    # size reloads the model (minutes on a CPU).
    main_model.extra_params = dict(main_model.extra_params or {}, num_ctx=context)
    meter = Meter()
    meter.wrap(main_model)
    coder = Coder.create(main_model, main_model.edit_format, io, fnames=[str(f) for f in fnames],
                         use_git=False, stream=False, cache_prompts=True, suggest_shell_commands=False,
                         ignore_mentions=set(test_files))
    coder.get_file_mentions = lambda x: set()  # no other files, as in the harness

    outcomes, dur, timed_out = [], 0.0, 0
    for _ in range(tries):
        start = time.monotonic()
        meter.deadline = start + wall
        # A backstop for what is not a model call (Aider's retries, its linters): the calls
        # themselves end at the deadline (Meter).
        signal.alarm(wall + ALARM_GRACE)
        try:
            coder.run(with_message=instructions, preproc=False)
        except WallTime:
            pass
        finally:
            signal.alarm(0)
        if time.monotonic() >= meter.deadline:
            timed_out += 1
        dur += time.monotonic() - start
        errors = run_tests(original, work, test_files, timeout)
        outcomes.append(errors is None)
        if errors is None:
            break
        instructions = errors + TEST_FAILURES.format(file_list=file_list)
    return {
        "id": original.parent.name + "/" + original.name,
        "tests_outcomes": outcomes,
        "pass1": bool(outcomes and outcomes[0]),
        "pass2": any(outcomes),
        "calls": meter.calls,
        "model_seconds": round(meter.seconds, 2),
        "duration": round(dur, 2),
        "prompt_tokens": coder.total_tokens_sent,
        "completion_tokens": coder.total_tokens_received,
        "edit_format": main_model.edit_format,
        "malformed": coder.num_malformed_responses,
        "timed_out": timed_out,
    }


# A task's default test command and test files per language, as eval/language.go and
# eval/task.go have them.
TASK_TEST_COMMANDS = {"go": "go test -count=1 ./...", "python": "python3 -m pytest -q -p no:cacheprovider"}
TASK_TEST_FILES = {
    "go": ["*_test.go", "testdata/"],
    "python": ["test_*.py", "*_test.py", "conftest.py", "tests/", "test/", "testing/"],
}


def is_test_file(patterns, rel):
    p = PurePosixPath(rel)
    for pat in patterns:
        if pat.endswith("/"):
            if pat[:-1] in p.parts[:-1]:
                return True
            continue
        if fnmatch(rel, pat) or ("/" not in pat and fnmatch(p.name, pat)):
            return True
    return False


def git(cwd, *args, **kw):
    return subprocess.run(["git", *args], cwd=cwd, check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw).stdout


def judge_task(task_dir, task, work, base, testdir, held, timeout):
    """lemmings eval's judge: the work tree in a clean folder, the base's test files put
    back as the base has them, the held-back tests added (when held), the test command run.
    Returns (passed, output)."""
    if testdir.exists():
        shutil.rmtree(testdir)
    shutil.copytree(work, testdir, ignore=shutil.ignore_patterns(".git", ".aider*"))
    patterns = task.get("test_files") or TASK_TEST_FILES.get(task["language"], [])
    names = git(work, "ls-tree", "-r", "-z", "--name-only", base).decode().split("\0")
    tests = [n for n in names if n and is_test_file(patterns, n)]
    if tests:
        data = git(work, "archive", "--format=tar", base, "--", *tests)
        with tarfile.open(fileobj=_io.BytesIO(data)) as tf:
            for m in tf.getmembers():
                if m.isfile():
                    dst = testdir / m.name
                    dst.parent.mkdir(parents=True, exist_ok=True)
                    if dst.is_symlink() or dst.exists():
                        dst.unlink()
                    dst.write_bytes(tf.extractfile(m).read())
    if held:
        for rel in task["held_back"]:
            dst = testdir / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(task_dir / "held" / rel, dst)
    command = task.get("test_command") or TASK_TEST_COMMANDS[task["language"]]
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    try:
        r = subprocess.run(["sh", "-c", command], cwd=testdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=timeout, errors="replace", env=env)
    except subprocess.TimeoutExpired:
        return False, "Tests timed out!"
    return r.returncode == 0, cleanup_test_output(r.stdout, testdir)


def changed_files(work, base):
    """The files the work tree changed against the base: modified, added, deleted."""
    out = git(work, "status", "--porcelain", "-z", "--untracked-files=all").decode().split("\0")
    files = set()
    for entry in out:
        if len(entry) > 3:
            files.add(entry[3:])
    files.update(n for n in git(work, "diff", "--name-only", "-z", base, "HEAD").decode().split("\0") if n)
    return sorted(f for f in files if not f.startswith(".aider"))


def one_task(task_dir, work, model_name, tries, timeout, wall, edit_format, context, files, map_tokens):
    task = json.loads((task_dir / "task.json").read_text())
    if work.exists():
        shutil.rmtree(work)
    work.parent.mkdir(parents=True, exist_ok=True)
    git(work.parent, "clone", "-q", "-b", "main", str(task_dir / task["repo"]), str(work))
    git(work, "remote", "remove", "origin")
    base = git(work, "rev-parse", "HEAD").decode().strip()
    testdir = work.parent / (work.name + "-test")

    io = InputOutput(pretty=False, yes=True, chat_history_file=work / ".aider.chat.history.md")
    main_model = models.Model(model_name)
    main_model.edit_format = edit_format
    main_model.extra_params = dict(main_model.extra_params or {}, num_ctx=context)
    meter = Meter()
    meter.wrap(main_model)
    fnames = [str(work / f) for f in task["changed"]] if files == "real" else []
    repo = GitRepo(io, fnames, str(work))
    # No auto-commits: the judge reads the work tree, and a commit message is a model call of its own.
    coder = Coder.create(main_model, main_model.edit_format, io, repo=repo, fnames=fnames, map_tokens=map_tokens,
                         stream=False, cache_prompts=True, suggest_shell_commands=False, auto_lint=False,
                         auto_test=False, auto_commits=False, dirty_commits=False)
    message = task["remit"]
    outcomes, dur, timed_out, first_changed, reason = [], 0.0, 0, None, ""
    for n in range(tries):
        start = time.monotonic()
        meter.deadline = start + wall
        signal.alarm(wall + ALARM_GRACE)
        try:
            coder.run(with_message=message, preproc=False)
        except WallTime:
            pass
        finally:
            signal.alarm(0)
        if time.monotonic() >= meter.deadline:
            timed_out += 1
        dur += time.monotonic() - start
        if first_changed is None:
            first_changed = changed_files(work, base)
        passed, output = judge_task(task_dir, task, work, base, testdir, True, timeout)
        outcomes.append(passed)
        reason = "" if passed else output.strip()[-400:]
        if passed or n + 1 == tries:
            break
        own, output = judge_task(task_dir, task, work, base, testdir, False, timeout)
        if own:
            break  # the repository's own tests pass: nothing to tell a second try
        message = output + TEST_FAILURES.format(file_list=" ".join(task["changed"]) if files == "real" else "the repository")
    shutil.rmtree(testdir, ignore_errors=True)
    real = sorted(task["changed"])
    return {
        "id": task["language"] + "/" + task_dir.name,
        "files": files,
        "tests_outcomes": outcomes,
        "pass1": bool(outcomes and outcomes[0]),
        "pass2": any(outcomes),
        "calls": meter.calls,
        "model_seconds": round(meter.seconds, 2),
        "duration": round(dur, 2),
        "prompt_tokens": coder.total_tokens_sent,
        "completion_tokens": coder.total_tokens_received,
        "edit_format": main_model.edit_format,
        "malformed": coder.num_malformed_responses,
        "timed_out": timed_out,
        "reason": reason,
        "localisation": {"changed": first_changed or [], "real": real,
                         "hit": any(f in real for f in first_changed or []),
                         "all": all(f in (first_changed or []) for f in real)},
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--context", type=int, default=8192)
    ap.add_argument("--out", required=True)
    ap.add_argument("--tries", type=int, default=2)
    ap.add_argument("--test-timeout", type=int, default=180)
    ap.add_argument("--wall", type=int, default=300, help="seconds per attempt")
    ap.add_argument("--edit-format", default="whole")
    ap.add_argument("--files", choices=("real", "none"), default="real",
                    help="tasks: add the files the real change touched to the chat, or none (the repository map alone)")
    ap.add_argument("--map-tokens", type=int, default=1024, help="tasks: Aider's repository map budget (its default)")
    ap.add_argument("exercises", nargs="+")
    a = ap.parse_args()
    offline_model_info(a.model, a.context)
    signal.signal(signal.SIGALRM, on_alarm)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    results = []
    for ex in a.exercises:
        ex = Path(ex).resolve()
        if (ex / "task.json").exists():
            r = one_task(ex, out / "work" / ex.parent.name / ex.name, a.model, a.tries, a.test_timeout, a.wall,
                         a.edit_format, a.context, a.files, a.map_tokens)
        else:
            r = one(ex, out / "work" / ex.parent.name / ex.name, a.model, a.tries, a.test_timeout, a.wall,
                    a.edit_format, a.context)
        results.append(r)
        print(json.dumps(r), flush=True)
    (out / "aider.json").write_text(json.dumps({"aider": __version__, "model": a.model, "results": results}, indent=2))


if __name__ == "__main__":
    sys.exit(main())

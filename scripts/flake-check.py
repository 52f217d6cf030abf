#!/usr/bin/python3
"""flake-check: every test run many times on a machine kept busy, failures counted per test.

Run by `make flake-check` (mk/flake.mk), which builds what the parts need and
passes the tree's settings (build directory, C test programs, Rubies). Parts:

  go         every Go package with tests (`go list`), as `make test` runs them
             but all with -race and -count=RUNS, through `go test -json`:
             core/... and the rest in one `go test` (HEV2_CONNECT set for
             tests/connectbed), then tests/resolvertest
             with -race -skip Flood and its Flood test without -race (the race
             detector cannot hold its 10,000 lookups), as mk/resolvers.mk does.
  c          each C test program of tests/c (CAPI_TESTS) RUNS times, as
             test-capi-plain runs it (the dlopen ones given the library).
  scenarios  `hev2-testbed suite` RUNS times for each client `make test` runs
             it with (mk/testbed.mk, mk/capi.mk, mk/python.mk, mk/ruby.mk),
             each row's verdict read from the suite's table (it has no JSON
             output): its PASS/FAIL/UNSUP/EXCL lines, checked against its
             count line and exit status, else the run counts as a failure of
             "(suite run) x CLIENT".

While they run, HOG processes (default: one per CPU) spin at the tests'
priority. They are stopped on every way out (finally, SIGINT/SIGTERM/SIGHUP)
and stop themselves if this script dies without cleaning up (they watch
their parent). The Go test binaries are built before the hog starts, so
the times printed (and their x10 estimates) are the tests'; the go part's
estimate is an upper bound, its linking being counted in every run.

Every run's log is kept under OUT (build/flake): go/<group>.json (the
`go test -json` stream) and go/<group>.log (its text), c/<test>.<run>.log,
scenarios/<client>.<run>.log (and the traces of a failed run). The table
(one row per Go test and subtest, C program, scenario x client: runs,
failures) is printed at the end and written to OUT/table.txt, the output of
each failure to OUT/failures.txt. Exit status 1 when anything failed.
"""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import OrderedDict
from typing import Dict, List, Optional, Tuple

PARTS = ("go", "c", "scenarios")

# The hog: spins, and exits as soon as its parent (this script) is gone.
HOG_CODE = """
import os, sys
parent = int(sys.argv[2])
while os.getppid() == parent:
    for _ in range(1000000):
        pass
"""


class Row:
    """One test (Go test or subtest, C program, scenario x client)."""

    def __init__(self, part: str, name: str) -> None:
        self.part = part
        self.name = name
        self.runs = 0
        self.failures = 0
        self.skips = 0
        self.notes: List[str] = []  # where to read each failure


class Results:
    def __init__(self) -> None:
        self.rows: "OrderedDict[Tuple[str, str], Row]" = OrderedDict()
        self.failure_text: List[str] = []
        self.timings: List[Tuple[str, float, int]] = []  # part, seconds, runs

    def row(self, part: str, name: str) -> Row:
        key = (part, name)
        if key not in self.rows:
            self.rows[key] = Row(part, name)
        return self.rows[key]

    def record(self, part: str, name: str, ok: bool, note: str = "") -> None:
        r = self.row(part, name)
        r.runs += 1
        if not ok:
            r.failures += 1
            if note and note not in r.notes:
                r.notes.append(note)


# ---- running commands ----------------------------------------------------------


def run_logged(cmd: List[str], log: str, env: Optional[Dict[str, str]] = None,
               timeout: float = 600, cwd: Optional[str] = None) -> Tuple[int, float]:
    """Runs cmd with stdout and stderr into the file log; returns (status, seconds).

    A run past timeout is sent SIGTERM (SIGKILL 15 s later) and gets status
    124, as timeout(1) gives, noted at the end of its log."""
    os.makedirs(os.path.dirname(log), exist_ok=True)
    start = time.monotonic()
    with open(log, "wb") as f:
        f.write(("$ " + " ".join(cmd) + "\n").encode())
        f.flush()
        p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             env=env, cwd=cwd)
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.terminate()
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            f.write(("\nflake-check: killed after %.0f s (timeout)\n" % timeout).encode())
            rc = 124
        except BaseException:
            # Ctrl-C reached the child too (same process group); a SIGTERM
            # to this script did not: pass it on, then wait for it.
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    p.kill()
            raise
    return rc, time.monotonic() - start


class Hog:
    """n processes spinning on the CPUs for as long as the hog is held."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.procs: List[subprocess.Popen[bytes]] = []

    def start(self) -> None:
        for _ in range(self.n):
            self.procs.append(subprocess.Popen(
                [sys.executable, "-c", HOG_CODE, "flake-check-hog", str(os.getpid())],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        if self.procs:
            say("hog: %d spinning processes (pids %s)" % (self.n, " ".join(str(p.pid) for p in self.procs)))

    def stop(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.kill()
        for p in self.procs:
            p.wait()
        if self.procs:
            say("hog: stopped")
        self.procs = []


def say(msg: str) -> None:
    print("flake-check: " + msg, flush=True)


def fmt_secs(s: float) -> str:
    s = int(round(s))
    if s >= 3600:
        return "%dh%02dm" % (s // 3600, s % 3600 // 60)
    if s >= 60:
        return "%dm%02ds" % (s // 60, s % 60)
    return "%ds" % s


# ---- go ------------------------------------------------------------------------


def go_packages(gocmd: str) -> List[str]:
    out = subprocess.run([gocmd, "list", "-f", "{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}", "./..."],
                         check=True, capture_output=True, text=True).stdout
    return [p for p in out.split() if p]


def short_pkg(pkg: str, module: str) -> str:
    return pkg[len(module) + 1:] if pkg.startswith(module + "/") else ("." if pkg == module else pkg)


def parse_go_json(path: str, module: str, res: Results, suffix: str = "") -> None:
    """Counts each test's and subtest's runs and failures in a go test -json stream.

    A test that started and never ended (its package crashed or timed out)
    counts as failed; a package that failed with no failed test (build
    error, crash outside a test, exit status) is a row of its own."""
    output: Dict[Tuple[str, str], List[str]] = {}
    started: Dict[Tuple[str, str], int] = {}
    ended: Dict[Tuple[str, str], int] = {}
    pkg_failed: Dict[str, bool] = {}
    pkg_test_failed: Dict[str, bool] = {}
    stray: List[str] = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if not line.startswith("{"):
                stray.append(line)
                continue
            try:
                ev = json.loads(line)
            except ValueError:
                stray.append(line)
                continue
            action = ev.get("Action", "")
            pkg = ev.get("Package") or ev.get("ImportPath", "")
            pkg = pkg.split(" ")[0]  # "pkg [pkg.test]" of build events
            test = ev.get("Test", "")
            if action == "build-fail":
                pkg_failed[pkg] = True
                continue
            if action == "build-output":
                output.setdefault((pkg, ""), []).append(ev.get("Output", ""))
                continue
            key = (pkg, test)
            if action == "output":
                output.setdefault(key, []).append(ev.get("Output", ""))
            elif not test:
                if action == "fail":
                    pkg_failed[pkg] = True
            elif action == "run":
                started[key] = started.get(key, 0) + 1
            elif action in ("pass", "fail", "skip"):
                ended[key] = ended.get(key, 0) + 1
                name = "%s %s%s" % (short_pkg(pkg, module), test, suffix)
                if action == "skip":
                    res.row("go", name).skips += 1
                    continue
                ok = action == "pass"
                res.record("go", name, ok, "" if ok else os.path.relpath(path[:-len(".json")] + ".log"))
                if not ok:
                    pkg_test_failed[pkg] = True
                    res.failure_text.append("==== go %s: failed run, from %s\n%s" % (
                        name, path, "".join(output.get(key, [])[-200:])))
                output.pop(key, None)  # the next run's output starts afresh
    for key, n in started.items():
        for _ in range(n - ended.get(key, 0)):
            pkg, test = key
            name = "%s %s%s" % (short_pkg(pkg, module), test, suffix)
            res.record("go", name, False, "%s: never finished (crash or timeout)" % os.path.relpath(path[:-len(".json")] + ".log"))
            pkg_test_failed[pkg] = True
            res.failure_text.append("==== go %s: started, never finished (the package crashed or timed out), from %s\n%s" % (
                name, path, "".join(output.get(key, [])[-200:])))
    for pkg, failed in pkg_failed.items():
        name = "%s (package)%s" % (short_pkg(pkg, module), suffix)
        if failed and not pkg_test_failed.get(pkg):
            res.record("go", name, False, os.path.relpath(path))
            res.failure_text.append("==== go %s: the package failed outside any test, from %s\n%s%s" % (
                name, path, "".join(output.get((pkg, ""), [])[-200:]), "".join(stray[-50:])))


def write_go_text(json_path: str, text_path: str) -> None:
    """The readable log beside a go test -json stream: its output lines."""
    with open(json_path, encoding="utf-8", errors="replace") as f, open(text_path, "w", encoding="utf-8") as out:
        for line in f:
            if line.startswith("{"):
                try:
                    ev = json.loads(line)
                except ValueError:
                    out.write(line)
                    continue
                if "Output" in ev:
                    out.write(ev["Output"])
            else:
                out.write(line)


def go_groups(a: argparse.Namespace) -> Tuple[str, List[str], List[Tuple[str, List[str], List[str], str]]]:
    """(module, every package with tests, the go test runs: name, flags, packages, row suffix)."""
    module = subprocess.run([a.go, "list", "-m"], check=True, capture_output=True, text=True).stdout.strip()
    pkgs = go_packages(a.go)
    if a.go_packages:
        sel = re.compile(a.go_packages)
        pkgs = [p for p in pkgs if sel.search(short_pkg(p, module))]
    resolvertest = module + "/tests/resolvertest"
    rest = [p for p in pkgs if p != resolvertest]
    rt = [resolvertest] if resolvertest in pkgs else []
    return module, pkgs, [
        ("all", ["-race"], rest, ""),
        ("resolvertest-race", ["-race", "-skip", "Flood"], rt, ""),
        ("resolvertest-flood", ["-run", "Flood"], rt, " [no -race]"),
    ]


def go_env(a: argparse.Namespace) -> Dict[str, str]:
    return dict(os.environ, HEV2_CONNECT=os.path.abspath(os.path.join(a.build, "hev2-connect")))


def prepare_go(a: argparse.Namespace, res: Results) -> bool:
    """Builds (and caches) the test binaries before the hog starts, so that the
    runs time the tests; false when they do not build."""
    _, pkgs, _ = go_groups(a)
    d = os.path.join(a.out, "go")
    race_or_not: List[List[str]] = [["-race"], []]
    for race in race_or_not:
        log = os.path.join(d, "build%s.log" % ("-race" if race else ""))
        rc, secs = run_logged([a.go, "test"] + race + ["-count=1", "-run", "^$"] + pkgs, log, env=go_env(a), timeout=3600)
        say("go: test binaries built%s (%s)" % (" with -race" if race else "", fmt_secs(secs)))
        if rc != 0:
            say("go: building the tests failed (status %d), see %s" % (rc, log))
            res.record("go", "(build)", False, log)
            return False
    return True


def part_go(a: argparse.Namespace, res: Results) -> None:
    module, _, groups = go_groups(a)
    env = go_env(a)
    d = os.path.join(a.out, "go")
    total = 0.0
    for group, flags, gpkgs, suffix in groups:
        if not gpkgs:
            continue
        jpath = os.path.join(d, group + ".json")
        cmd = [a.go, "test", "-json", "-count=%d" % a.runs, "-timeout", a.go_timeout] + flags + gpkgs
        say("go: %s: go test %s -count=%d (%d packages)" % (group, " ".join(flags), a.runs, len(gpkgs)))
        rc, secs = run_logged(cmd, jpath, env=env, timeout=parse_duration(a.go_timeout) + 300)
        total += secs
        write_go_text(jpath, os.path.join(d, group + ".log"))
        before = sum(r.failures for r in res.rows.values())
        parse_go_json(jpath, module, res, suffix)
        failed = sum(r.failures for r in res.rows.values()) - before
        if rc != 0 and failed == 0:
            res.record("go", "(go test %s)" % group, False, jpath)
            failed = 1
        say("go: %s: %s, status %d, %d failed test runs (%s)" % (group, fmt_secs(secs), rc, failed, os.path.join(d, group + ".log")))
    res.timings.append(("go", total, a.runs))


def parse_duration(s: str) -> float:
    m = re.fullmatch(r"(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?", s)
    if not m or not any(m.groups()):
        raise SystemExit("flake-check: bad duration %r (want e.g. 90m, 1h30m)" % s)
    h, mi, se = (int(x or 0) for x in m.groups())
    return h * 3600 + mi * 60 + se


# ---- c -------------------------------------------------------------------------


def part_c(a: argparse.Namespace, res: Results) -> None:
    tests = a.c_tests.split()
    dlopen = set(a.c_dlopen.split())
    lib = os.path.abspath(os.path.join(a.build, "libhev2.so"))
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:halt_on_error=1",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
    d = os.path.join(a.out, "c")
    total = 0.0
    for i in range(1, a.runs + 1):
        failed = []
        t0 = time.monotonic()
        for t in tests:
            exe = os.path.join(a.build, "tests", "c", t)
            cmd = [exe, lib] if t in dlopen else [exe]
            log = os.path.join(d, "%s.%d.log" % (t, i))
            rc, _ = run_logged(cmd, log, env=env, timeout=a.c_timeout)
            ok = rc == 0
            res.record("c", "tests/c/" + t, ok, "" if ok else log)
            if not ok:
                failed.append(t)
                with open(log, encoding="utf-8", errors="replace") as f:
                    res.failure_text.append("==== c tests/c/%s: run %d, status %d, %s\n%s" % (
                        t, i, rc, log, "".join(f.readlines()[-80:])))
        secs = time.monotonic() - t0
        total += secs
        say("c: run %d/%d: %s, %s" % (i, a.runs, fmt_secs(secs), ("FAILED " + " ".join(failed)) if failed else "all passed"))
    res.timings.append(("c", total, a.runs))


# ---- scenarios -----------------------------------------------------------------

ROW_RE = re.compile(r"^(PASS|FAIL|UNSUP|EXCL)\s+(\S+)\s")
COUNT_RE = re.compile(r"^testbed: (\d+) passed, (\d+) failed, (\d+) skipped$")


def scenario_clients(a: argparse.Namespace) -> List[Tuple[str, List[str], Dict[str, str], bool]]:
    """(label, client words, environment, with trace files) of every suite run
    `make test` makes: mk/testbed.mk (test-testbed), mk/capi.mk
    (test-capi-scenarios), mk/python.mk (test-python-scenarios), mk/ruby.mk
    (test-ruby-scenarios). Keep in step with them."""
    b = os.path.abspath(a.build)
    lib = os.path.join(b, "libhev2.so")
    dial = os.path.join(b, "hev2-dial")
    conn = os.path.join(b, "hev2-connect")
    py = {"HEV2_LIBRARY": lib, "PYTHONPATH": os.path.abspath("bindings/python/src"), "PYTHONDONTWRITEBYTECODE": "1"}
    pyc = os.path.abspath("bindings/python/tests/client")
    clients: List[Tuple[str, List[str], Dict[str, str], bool]] = [
        ("hev2-go", [dial], {}, True),
        ("hev2-go-builtin", [dial, "--resolver", "builtin"], {}, False),
        ("hev2-c", [conn, "--json"], {}, True),
        ("hev2-c-waiter", [conn, "--json", "--drive", "waiter"], {}, True),
        ("hev2-c-waiter-builtin", [conn, "--json", "--drive", "waiter", "--resolver", "builtin"], {}, True),
        ("hev2-c-builtin", [conn, "--json", "--resolver", "builtin"], {}, True),
        ("hev2-c-nameserver", [conn, "--json", "--resolver", "builtin", "--nameserver", "[2001:db8::53]:53"], {}, True),
    ]
    for c in ("hev2-client", "hev2-client-asyncio"):
        label = c.replace("hev2-client", "hev2-python")
        clients.append((label, [os.path.join(pyc, c)], py, True))
        clients.append((label + "-builtin", [os.path.join(pyc, c), "--resolver", "builtin"], py, False))
    for r in a.rubies.split():
        try:
            v = subprocess.run([r, "-e", "print RUBY_VERSION"], check=True, capture_output=True, text=True).stdout
        except (OSError, subprocess.CalledProcessError) as e:
            raise SystemExit("flake-check: Ruby %s does not run: %s" % (r, e))
        env = {"HEV2_LIBRARY": lib, "RUBYLIB": os.path.join(os.path.abspath(a.ruby_ext_dir), v)}
        clients.append(("hev2-ruby-" + v, [r, os.path.abspath("bindings/ruby/test/client/hev2-client")], env, True))
    if a.clients:
        sel = re.compile(a.clients)
        clients = [c for c in clients if sel.search(c[0])]
    return clients


def part_scenarios(a: argparse.Namespace, res: Results) -> None:
    suite = os.path.join(a.build, "hev2-testbed")
    d = os.path.join(a.out, "scenarios")
    clients = scenario_clients(a)
    say("scenarios: clients %s" % " ".join(c[0] for c in clients))
    total = 0.0
    for i in range(1, a.runs + 1):
        t0 = time.monotonic()
        summary = []
        for label, words, extra, traces in clients:
            log = os.path.join(d, "%s.%d.log" % (label, i))
            tdir = os.path.join(d, "traces", "%s.%d" % (label, i))
            cmd = [suite, "suite"] + (["--trace-files", tdir] if traces else []) + ["--client", " ".join(words)]
            rc, _ = run_logged(cmd, log, env=dict(os.environ, **extra), timeout=a.suite_timeout)
            nfail = read_suite(log, label, rc, i, res)
            if nfail == 0 and os.path.isdir(tdir):
                shutil.rmtree(tdir)  # kept only for a failed run
            summary.append("%s:%s" % (label, "ok" if nfail == 0 else "%d FAILED" % nfail))
        secs = time.monotonic() - t0
        total += secs
        say("scenarios: run %d/%d: %s, %s" % (i, a.runs, fmt_secs(secs), " ".join(summary)))
    res.timings.append(("scenarios", total, a.runs))


def read_suite(log: str, label: str, rc: int, run: int, res: Results) -> int:
    """Records each row's verdict from one suite run's table; returns the failures.

    A run whose table is missing or disagrees with its count line or its exit
    status counts as a failure of the row "(suite run)"."""
    with open(log, encoding="utf-8", errors="replace") as f:
        lines = f.readlines()
    rows: List[Tuple[str, str, str]] = []
    counts = None
    in_table = False
    for line in lines:
        if line.startswith("scenario suite, client:"):
            in_table = True
            continue
        m = COUNT_RE.match(line.rstrip("\n"))
        if m:
            counts = tuple(int(x) for x in m.groups())
            in_table = False
            continue
        if in_table:
            m = ROW_RE.match(line)
            if m:
                rows.append((m.group(1), m.group(2), line.rstrip("\n")))
    passed = sum(1 for v, _, _ in rows if v == "PASS")
    failed = sum(1 for v, _, _ in rows if v in ("FAIL", "UNSUP"))
    skipped = sum(1 for v, _, _ in rows if v == "EXCL")
    sane = counts == (passed, failed, skipped) and (rc == 0) == (failed == 0) and rc in (0, 1)
    nfail = 0
    for verdict, name, line in rows:
        if verdict == "EXCL":
            continue
        ok = verdict == "PASS"
        res.record("scenarios", "%s x %s" % (name, label), ok, "" if ok else log)
        if not ok:
            nfail += 1
            stderr = stderr_section(lines, name)
            res.failure_text.append("==== scenario %s x %s: run %d, %s\n%s\n%s" % (name, label, run, log, line, stderr))
    if not sane:
        nfail += 1
        res.record("scenarios", "(suite run) x %s" % label, False, log)
        res.failure_text.append("==== scenario suite x %s: run %d, status %d, table %s (rows read: %d/%d/%d), %s\n%s" % (
            label, run, rc, counts, passed, failed, skipped, log, "".join(lines[-60:])))
    else:
        res.record("scenarios", "(suite run) x %s" % label, True)
    return nfail


def stderr_section(lines: List[str], name: str) -> str:
    """The "--- stderr of NAME:" section the suite prints after its table."""
    head = "--- stderr of %s:" % name
    out: List[str] = []
    for i, line in enumerate(lines):
        if line.rstrip("\n") == head:
            for rest in lines[i:]:
                if out and rest.startswith("--- stderr of "):
                    break
                out.append(rest)
            break
    return "".join(out[:60])


# ---- the table -----------------------------------------------------------------


def table(res: Results, parts: List[str]) -> Tuple[str, int]:
    # The bookkeeping rows ("(suite run) x CLIENT", "(build)") only when they failed.
    rows = [r for r in res.rows.values() if (r.runs > 0 and not r.name.startswith("(")) or r.failures > 0]
    w = max([len(r.name) for r in rows] + [20])
    lines = ["%-9s  %-*s  %5s  %8s" % ("part", w, "test", "runs", "failures")]
    for part in parts:
        for r in sorted((r for r in rows if r.part == part), key=lambda r: r.name):
            lines.append("%-9s  %-*s  %5d  %8s" % (r.part, w, r.name, r.runs, r.failures if r.failures else "-"))
    tests = len(rows)
    total_runs = sum(r.runs for r in rows)
    total_fail = sum(r.failures for r in rows)
    flaky = [r for r in rows if r.failures]
    lines.append("%-9s  %-*s  %5d  %8d" % ("total", w, "%d tests, %d with a failure" % (tests, len(flaky)), total_runs, total_fail))
    skipped_always = sorted(r.name for r in res.rows.values() if r.runs == 0 and r.skips > 0)
    if skipped_always:
        lines.append("(skipped in every run, not in the table: %s)" % ", ".join(skipped_always))
    if flaky:
        lines.append("")
        lines.append("failed (runs/failures, where to read):")
        for r in sorted(flaky, key=lambda r: (PARTS.index(r.part), r.name)):
            lines.append("  %-9s %s  %d/%d  %s" % (r.part, r.name, r.runs, r.failures, "; ".join(r.notes[:3])))
    return "\n".join(lines) + "\n", total_fail


def main() -> int:
    ap = argparse.ArgumentParser(description="Runs the tests many times under a CPU hog and counts failures per test.")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--parts", default=" ".join(PARTS), help="some of: go c scenarios")
    ap.add_argument("--out", default="build/flake")
    ap.add_argument("--build", default="build")
    ap.add_argument("--go", default="go")
    ap.add_argument("--go-timeout", default="", help="go test -timeout (default: 10m per run)")
    ap.add_argument("--c-tests", default="")
    ap.add_argument("--c-dlopen", default="")
    ap.add_argument("--c-timeout", type=float, default=600, help="seconds per C test run")
    ap.add_argument("--suite-timeout", type=float, default=900, help="seconds per suite run")
    ap.add_argument("--rubies", default="/usr/bin/ruby")
    ap.add_argument("--ruby-ext-dir", default="build/ruby-ext")
    ap.add_argument("--go-packages", default="", help="regexp: only the Go packages whose path in the module matches")
    ap.add_argument("--clients", default="", help="regexp: only the scenario clients whose label matches")
    ap.add_argument("--hog", type=int, default=os.cpu_count() or 2, help="spinning processes (0: none)")
    a = ap.parse_args()
    parts = a.parts.split()
    bad = [p for p in parts if p not in PARTS]
    if bad or not parts or a.runs < 1:
        ap.error("--parts: some of %s (got %r); --runs >= 1" % (" ".join(PARTS), a.parts))
    if not a.go_timeout:
        a.go_timeout = "%dm" % (10 * a.runs)
    if "c" in parts and not a.c_tests:
        ap.error("--c-tests: the C test programs (CAPI_TESTS)")
    if os.geteuid() != 0:
        say("not root: the namespace tests will skip and the scenario suite cannot run")

    # The parts' logs of an earlier run go; the directory is this run's.
    for p in parts:
        shutil.rmtree(os.path.join(a.out, p), ignore_errors=True)
    os.makedirs(a.out, exist_ok=True)

    def on_signal(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)

    res = Results()
    hog = Hog(a.hog)
    status = 0
    interrupted = ""
    started = time.monotonic()
    try:
        run = [p for p in parts if p != "go" or prepare_go(a, res)]
        hog.start()
        for p in run:
            {"go": part_go, "c": part_c, "scenarios": part_scenarios}[p](a, res)
    except KeyboardInterrupt:
        interrupted = "interrupted (SIGINT)"
        status = 130
    except SystemExit as e:
        if not isinstance(e.code, int):
            raise
        interrupted = "interrupted (signal %d)" % (e.code - 128)
        status = e.code
    finally:
        hog.stop()
    elapsed = time.monotonic() - started

    text, failures = table(res, parts)
    with open(os.path.join(a.out, "table.txt"), "w", encoding="utf-8") as f:
        f.write(text)
    with open(os.path.join(a.out, "failures.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(res.failure_text))
    print()
    print("flake-check: %d run%s each, %s hog process%s, parts: %s" % (
        a.runs, "" if a.runs == 1 else "s", a.hog, "" if a.hog == 1 else "es", " ".join(parts)))
    print(text, end="")
    print()
    for part, secs, runs in res.timings:
        print("time: %-9s %s for %d run%s (%s per run; 10 runs ~ %s)" % (
            part, fmt_secs(secs), runs, "" if runs == 1 else "s", fmt_secs(secs / runs), fmt_secs(secs / runs * 10)))
    print("time: total     %s; logs in %s, table in %s, failures' output in %s" % (
        fmt_secs(elapsed), a.out, os.path.join(a.out, "table.txt"), os.path.join(a.out, "failures.txt")))
    if interrupted:
        print("flake-check: %s: the table holds the runs made so far" % interrupted)
        return status
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

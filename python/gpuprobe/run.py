"""`python -m gpuprobe run [-o PATH] [-c CONFIG] [--] CMD ARGS...`: traces a program that was not
written for gpuprobe, as `nsys profile` or `py-spy record` do.

The child's environment (child_environment, the one description the C++ `gpuprobe run` follows
by running this module):
  GPUPROBE    chrome=PATH (default gpuprobe-%p.json: %p is each process's pid, so children —
              DataLoader workers, multiprocessing, torchrun's ranks — write files of their own),
              cupti=all,cupti_start=cuda (CUPTI starts in a process when it initializes CUDA;
              CONFIG's own cupti= or cupti_start= wins), then CONFIG's keys
  CUDA_INJECTION64_PATH, NVTX_INJECTION64_PATH
              libgpuprobe_nvtx.so (installed beside the package), unless another tool (Nsight)
              is named there already: the CUDA driver loads it when a process initializes CUDA,
              NVTX at a process's first NVTX call, so that programs built without gpuprobe —
              native ones too — record their kernels, copies, CUDA calls and NVTX ranges, and
              processes that use neither load nothing. In a Python process the session is
              gpuprobe._core's, which the library hands both to.
  GPUPROBE_RUN_INJECTION  that library's path, so the sitecustomize knows it for the runner's
  PYTHONPATH  gpuprobe's _run_site directory first, whose sitecustomize runs the one the program
              would have had, starts the session before the program's code and, when the program
              imports torch, turns on steps, GC pauses, compile telemetry, DataLoader waits and
              module ranges (gpuprobe._autorun: GPUPROBE_RUN_* turn parts off)
  GPUPROBE_RUN_PACKAGE  the directory holding this gpuprobe, which the sitecustomize appends to
              sys.path only where the child's Python does not find gpuprobe itself

A config error is one line and the program is not started (exit 2); a program that cannot be
found exits 127 naming it; otherwise the program's exit status is passed through, a death by
signal N as 128+N. At the end: the trace files written and a short summary of each.
"""
import argparse
import glob
import os
import re
import signal
import subprocess
import sys
import time

DEFAULT_OUTPUT = "gpuprobe-%p.json"
SITE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_run_site")
PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


INJECTION_LIBRARY = "libgpuprobe_nvtx.so"


def injection_library(environ):
    """The library the CUDA driver and NVTX load into programs (GPUPROBE_INJECTION_LIB, else
    the one `pip install` puts beside the package), or None."""
    given = environ.get("GPUPROBE_INJECTION_LIB")
    if given:
        return os.path.abspath(given) if os.path.isfile(given) else None
    beside = os.path.join(PACKAGE_PARENT, "lib", INJECTION_LIBRARY)
    return beside if os.path.isfile(beside) else None


def _keys(config):
    return {item.split("=", 1)[0].strip() for item in (config or "").split(",") if item.strip()}


def config_string(output=None, config=None, cupti=True):
    """GPUPROBE's value: the chrome output, CUPTI from CUDA's initialization (unless ``cupti``
    is False or the user's config says), then the user's config."""
    parts = [f"chrome={output or DEFAULT_OUTPUT}"]
    given = _keys(config)
    if cupti and "cupti" not in given:
        parts.append("cupti=all")
    if cupti and "cupti_start" not in given:
        parts.append("cupti_start=cuda")
    if config:
        parts.append(config)
    return ",".join(parts)


def child_environment(environ, gpuprobe_config, library=None, cuda=True, nvtx=True):
    """The child's environment: ``environ`` with GPUPROBE, PYTHONPATH and, given the injection
    ``library``, the CUDA (``cuda``) and NVTX (``nvtx``) injection paths set (see the module)."""
    env = dict(environ)
    env["GPUPROBE"] = gpuprobe_config
    path = [SITE_DIR] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(path)
    env["GPUPROBE_RUN_PACKAGE"] = PACKAGE_PARENT
    if library:
        env["GPUPROBE_RUN_INJECTION"] = library
        wanted = {"CUDA_INJECTION64_PATH": cuda, "NVTX_INJECTION64_PATH": nvtx}
        for variable in (v for v, on in wanted.items() if on):
            if env.get(variable) and env[variable] != library:
                _say_once(f"{variable} names another tool ({env[variable]}): it keeps "
                          + ("CUDA" if variable.startswith("CUDA") else "NVTX"))
            else:
                env[variable] = library
    return env


def _has_gpu():
    return bool(glob.glob("/dev/nvidia[0-9]*"))


def _say_once(message):
    sys.stderr.write(f"gpuprobe: {message}\n")


def check_config(gpuprobe_config):
    """'' when the config is valid, else its one-line error."""
    from gpuprobe import _core

    return _core.Session.check(gpuprobe_config)


def _pattern(output):
    """A glob for the files an output path with %p/%h placeholders (or none: the first process
    writes PATH, each other PATH with its pid before the extension) names."""
    if "%p" in output or "%h" in output:
        return output.replace("%p", "*").replace("%h", "*"), None
    root, ext = os.path.splitext(output)
    return output, f"{root}.*{ext}"


def written_files(output, since):
    """The trace files written at or after ``since`` (time.time())."""
    found = set()
    for pattern in _pattern(output):
        if pattern:
            found.update(glob.glob(pattern))
    return sorted(f for f in found if os.path.isfile(f) and os.path.getmtime(f) >= since - 1)


def _cli_lines(args):
    from gpuprobe._report import cli

    try:
        result = subprocess.run([cli(), *args], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.SubprocessError):
        return None
    return result.stdout.splitlines() if result.returncode == 0 else None


def summary(path):
    """Five lines on a trace, from `gpuprobe info` and `gpuprobe report`: events, steps and drops,
    then the top ranges by total time."""
    info = _cli_lines(["info", path])
    if info is None:
        return [f"  (no summary: `gpuprobe info {path}` failed)"]
    fields = {}
    for line in info:
        m = re.match(r"^(events|steps|duration)\s+(.*)$", line)
        if m:
            fields.setdefault(m.group(1), m.group(2).strip())
    lines = [f"  events {fields.get('events', '?')}, steps {fields.get('steps', '0')}, "
             f"duration {fields.get('duration', '?')}, dropped {_dropped(info)}"]
    lines.append("  top ranges by total time:")
    lines += top_ranges(_cli_lines(["report", path]) or [], 3)
    return lines[:5]


def _dropped(info):
    """The events dropped, from `gpuprobe info`'s "dropped" block (0 when it has none)."""
    total = 0
    inside = False
    for line in info:
        if line.strip() == "dropped":
            inside = True
            continue
        if inside:
            if not line.startswith(" "):
                break
            numbers = re.findall(r"\d+", line)
            total += int(numbers[-1]) if numbers else 0
    return total


def top_ranges(report, n):
    """The first ``n`` rows of the report's "ranges" table (sorted by total time)."""
    rows = []
    for i, line in enumerate(report):
        if line.startswith("ranges ("):
            for row in report[i + 2:]:
                if not row.strip() or not row.startswith("  "):
                    break
                m = re.match(r"^\s+(.*?)\s+(\d+)\s+([\d.]+)\s", row)
                if m:
                    rows.append(f"    {m.group(1)}: {m.group(2)} calls, {m.group(3)} ms total")
                if len(rows) == n:
                    break
            break
    return rows or ["    (none)"]


def parse(argv):
    """The run command line: (options, the program's argv)."""
    from gpuprobe._autorun import DEPTH_VARIABLE, SWITCHES

    off = ", ".join(f"{v}=0 ({k})" for k, v in SWITCHES.items())
    parser = argparse.ArgumentParser(
        prog="gpuprobe run",
        description="Runs a program under gpuprobe: Python programs unmodified (steps, module "
        "ranges, GC, compiles, DataLoader waits once torch is imported).",
        epilog=f"Parts off by environment: {off}; {DEPTH_VARIABLE}=N levels of module ranges.")
    parser.add_argument("-o", "--output", default=DEFAULT_OUTPUT,
                        help="Chrome trace path; %%p is the pid, %%h the host "
                        f"[{DEFAULT_OUTPUT}]")
    parser.add_argument("-c", "--config", default="",
                        help="more GPUPROBE config keys, e.g. perfetto=t.pftrace,ring=65536")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the program and its arguments")
    options = parser.parse_args(argv)
    command = options.command
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        parser.error("no program given")
    return options, command


def _status(returncode):
    return 128 - returncode if returncode < 0 else returncode


def run(options, command, environ=None):
    """Runs the program; returns the exit status to pass on."""
    from gpuprobe._autorun import enabled

    environ = os.environ if environ is None else environ
    nvtx = enabled("nvtx", environ)
    library = injection_library(environ)
    # CUPTI from CUDA's start only where the driver will load gpuprobe: not without the library,
    # nor where another tool holds CUDA_INJECTION64_PATH (it is told, in child_environment).
    cupti = enabled("cupti", environ) and library is not None and environ.get(
        "CUDA_INJECTION64_PATH", library) == library
    if enabled("cupti", environ) and library is None and _has_gpu():
        _say_once(f"no {INJECTION_LIBRARY} beside the package: GPU work is not recorded")
    config = config_string(options.output, options.config, cupti)
    error = check_config(config)
    if error:
        sys.stderr.write(f"gpuprobe: {error}\n")
        return 2
    env = child_environment(environ, config, library if cupti or nvtx else None,
                            cuda=enabled("cupti", environ), nvtx=nvtx)
    start = time.time()
    try:
        # The program inherits every descriptor it would have had (MPI's PMI_FD, make's
        # jobserver, systemd's sockets), as it does without gpuprobe.
        child = subprocess.Popen(command, env=env, close_fds=False)
    except FileNotFoundError:
        sys.stderr.write(f"gpuprobe: {command[0]}: command not found\n")
        return 127
    except OSError as e:  # permission, not executable (ENOEXEC), a path through a file
        sys.stderr.write(f"gpuprobe: {command[0]}: {e.strerror or e}\n")
        return 126
    # Ctrl-C and termination go to the child (same process group / forwarded); the runner waits.
    forwarded = {}
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        try:
            forwarded[sig] = signal.signal(sig, lambda s, _f: _forward(child, s))
        except (OSError, ValueError):
            pass
    try:
        returncode = child.wait()
    finally:
        for sig, handler in forwarded.items():
            signal.signal(sig, handler)
    try:
        report_files(options.output, start)
    except BaseException as e:  # noqa: BLE001 - the program's status is what the runner returns
        try:
            sys.stderr.write(f"gpuprobe: no summary ({type(e).__name__})\n")
        except Exception:  # noqa: BLE001 - stderr may be gone
            pass
    return _status(returncode)


def _forward(child, sig):
    if sig != signal.SIGINT:  # SIGINT from a terminal reached the child's group already
        try:
            child.send_signal(sig)
        except OSError:
            pass


def report_files(output, since):
    """Prints the trace files written since ``since`` and a summary of each (on stderr: the
    program's stdout stays its own)."""
    files = written_files(output, since)
    if not files:
        sys.stderr.write(f"gpuprobe: no trace written ({output})\n")
        return
    for path in files:
        sys.stderr.write(f"gpuprobe: wrote {path}\n")
        for line in summary(path):
            sys.stderr.write(line + "\n")


def main(argv):
    """`python -m gpuprobe ...`: the run command here; every other one (capture, report, info
    ...) is the C++ gpuprobe's, which replaces this process with the same arguments (so that
    its output, signals and exit status are the command's own)."""
    if argv and argv[0] == "run":
        options, command = parse(argv[1:])
        return run(options, command)
    import shutil

    from gpuprobe._report import cli
    try:
        command = shutil.which(cli()) or cli()
        sys.stdout.flush()
        sys.stderr.flush()
        # As a shell would start it: Python ignores SIGPIPE and SIGXFSZ, and exec keeps that.
        for name in ("SIGPIPE", "SIGXFSZ"):
            if hasattr(signal, name):
                signal.signal(getattr(signal, name), signal.SIG_DFL)
        os.execv(command, [command, *argv])
    except (OSError, FileNotFoundError) as e:
        sys.stderr.write(f"gpuprobe: the gpuprobe command could not be run: {e}\n")
        return 127 if isinstance(e, FileNotFoundError) else 126

"""`gpuprobe.report(path)`: the report of a trace, a directory of traces (one per rank) or a
flight recorder dump, as `gpuprobe report --json` gives it — plain dicts and lists, the tables
also as pandas DataFrames when pandas is installed (``result.frames``), and in Jupyter the HTML
report. It runs the `gpuprobe` command that `pip install` put beside the interpreter (or
``GPUPROBE_CLI``)."""
import json
import html as html_module
import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import weakref

# Options of `gpuprobe report` that take a value, by their Python names.
_OPTIONS = {"limit": "--limit", "sort": "--sort", "steps": "--steps", "latency": "--latency",
            "threshold_ms": "--threshold-ms", "straggler_ratio": "--straggler-ratio"}
# The tables a DataFrame is made of: JSON key -> its rows.
_TABLES = ("kernels", "ranges", "latency", "copies")


def cli():
    """The path of the `gpuprobe` command: GPUPROBE_CLI, else the one installed with this
    package (the environment's scripts directory), else the first on PATH."""
    given = os.environ.get("GPUPROBE_CLI")
    if given:
        return given
    for scripts in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        candidate = pathlib.Path(scripts) / "gpuprobe"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which("gpuprobe")
    if found is None:
        raise FileNotFoundError("the gpuprobe command is not installed with this package "
                                "(pip install . builds it) and not on PATH; set GPUPROBE_CLI")
    return found


class Report(dict):
    """The report's JSON as a dict; ``frames``: its tables as pandas DataFrames (when pandas is
    installed); in Jupyter it shows as the HTML report."""

    def __init__(self, data, args):
        super().__init__(data)
        self._args = args

    @property
    def frames(self):
        import pandas  # only when asked

        return {k: pandas.DataFrame(self[k]) for k in _TABLES if isinstance(self.get(k), list)}

    def html(self):
        """The report as one self-contained HTML page (`gpuprobe report --html`)."""
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "report.html")
            _run(self._args + ["--html", out])
            return pathlib.Path(out).read_text()

    def _repr_html_(self):
        # In an iframe of its own: the page's script and style stay out of the notebook's.
        page = html_module.escape(self.html(), quote=True)
        return f'<iframe srcdoc="{page}" style="width:100%;height:900px;border:0"></iframe>'


def _run(args):
    done = subprocess.run([cli(), "report"] + args, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"gpuprobe report: {done.stderr.strip() or done.stdout.strip()}")
    return done.stdout


def report(path, torch_trace=None, **options):
    """The report of `path` (a trace, a directory of traces, a dump); `options` are those of
    `gpuprobe report`: limit, sort, steps, latency, threshold_ms, straggler_ratio.
    `torch_trace`: a TORCH_TRACE directory (or log) recorded without gpuprobe.torch, joined to
    the trace by time first (gpuprobe.torch.torch_trace) for the compile section."""
    joined_dir = tempfile.mkdtemp(prefix="gpuprobe-joined-") if torch_trace is not None else None
    try:
        if joined_dir is not None:
            from gpuprobe.torch.torch_trace import join

            joined = os.path.join(joined_dir, "joined.json")
            join(path, torch_trace, joined, cli=cli())
            path = joined
        args = [str(path)]
        for name, value in options.items():
            if name not in _OPTIONS:
                raise TypeError(f"report() got an unknown option {name!r} "
                                f"(options: {', '.join(_OPTIONS)})")
            args += [_OPTIONS[name], str(value)]
        result = Report(json.loads(_run(args + ["--json"])), args)
    except BaseException:
        if joined_dir is not None:
            shutil.rmtree(joined_dir, ignore_errors=True)
        raise
    if joined_dir is not None:  # the joined trace lives as long as the report (for .html())
        weakref.finalize(result, shutil.rmtree, joined_dir, True)
    return result

"""What torch.compile did while watched (CompileWatcher.report()): the data, field by field, and a
summary of a few lines for print() — compiles, recompiles and their reasons, graph breaks, eager
fallbacks, limit hits, cache answers and time — instead of the fields' repr (kilobytes of it)."""
import dataclasses

_SHOWN = 5  # entries of each list in the summary; the rest are counted
_WIDTH = 160  # characters of a reason on its line


def _line(text):
    """A reason on one line: its first non-empty line, clipped."""
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    first = lines[0] if lines else ""
    return first if len(first) <= _WIDTH else first[:_WIDTH - 3] + "..."


def _listed(out, items, describe):
    for item in items[:_SHOWN]:
        out.append("    " + describe(item))
    if len(items) > _SHOWN:
        out.append(f"    ... and {len(items) - _SHOWN} more")


@dataclasses.dataclass(repr=False)
class CompileReport:
    """What torch.compile did while watched. print() it for a summary; the fields hold it all."""

    compiles: list  # per frame compile: compile_id, seconds, recompile_reason, graph_breaks, ops
    graph_breaks: dict  # reason -> count
    recompiles: list  # {"compile_id", "reason"}
    cache: dict  # fxgraph / aot_autograd hits and misses
    eager_fallbacks: int  # frames Dynamo could not compile and ran eagerly
    fallbacks: list  # {"compile_id", "frame", "error"} for each compile that failed
    recompile_limit_hits: list  # the warnings torch logged
    compile_seconds: float  # T_compile: time inside compiles
    # Per compile and cache layer (FX graph, AOTAutograd), from the structured trace:
    # {"compile_id", "layer", "outcome" (hit, miss, bypass), "changed": [(component, before,
    # after)] since the frame's last compile, "key"}
    cache_events: list = dataclasses.field(default_factory=list)
    # Per compile id, each phase group's own seconds (compile_phases.py): Dynamo, AOTAutograd,
    # Inductor, code generation, kernel compile
    phases: dict = dataclasses.field(default_factory=dict)
    # Per generated module: {"compile_id", "path" of its source, "kernels": [(name, kind)]}
    generated_code: list = dataclasses.field(default_factory=list)
    # {"compile_id", "reason"} each time Dynamo began a frame's analysis again (attempt 1, ...),
    # most often to compile up to a graph break
    restarts: list = dataclasses.field(default_factory=list)

    @property
    def graph_break_count(self):
        return sum(self.graph_breaks.values())

    def __repr__(self):
        return (f"<CompileReport: {len(self.compiles)} compiles, {len(self.recompiles)} "
                f"recompiles, {self.graph_break_count} graph breaks, "
                f"{self.compile_seconds:.3f} s compiling; print() it for a summary>")

    def __str__(self):
        out = [f"torch.compile: {len(self.compiles)} compiles, {len(self.recompiles)} recompiles, "
               f"{self.compile_seconds:.3f} s compiling"]
        timed = [c for c in self.compiles if c.get("seconds") is not None]
        if timed:
            slowest = sorted(timed, key=lambda c: c["seconds"], reverse=True)[:3]
            out[0] += "; slowest " + ", ".join(f"{c['compile_id']} {c['seconds']:.3f} s"
                                               for c in slowest)
        if self.recompiles:
            out.append("  recompiles (the guard that failed):")
            _listed(out, self.recompiles, lambda r: f"{r['compile_id']}: {_line(r['reason'])}")
        breaks = sorted(self.graph_breaks.items(), key=lambda kv: kv[1], reverse=True)
        out.append(f"  graph breaks: {self.graph_break_count}"
                   + (f", {len(breaks)} distinct:" if breaks else ""))
        _listed(out, breaks, lambda kv: f"{kv[1]}x {_line(kv[0])}")
        if self.recompile_limit_hits:
            out.append(f"  recompile limit hit {len(self.recompile_limit_hits)} time(s): those "
                       "frames run eagerly")
            _listed(out, self.recompile_limit_hits, _line)
        if self.fallbacks or self.eager_fallbacks:
            out.append(f"  eager fallbacks: {max(self.eager_fallbacks, len(self.fallbacks))}")
            _listed(out, self.fallbacks, lambda f: f"{f.get('compile_id', '')}: "
                    f"{f.get('frame', '')}: {_line(f.get('error', ''))}")
        c = self.cache
        if any(c.values()):
            out.append(f"  cache: FX graph {c.get('fxgraph_hit', 0)} hits, "
                       f"{c.get('fxgraph_miss', 0)} misses; AOTAutograd "
                       f"{c.get('aot_autograd_hit', 0)} hits, {c.get('aot_autograd_miss', 0)} "
                       "misses")
        groups = {}
        for by_group in self.phases.values():
            for group, seconds in by_group.items():
                groups[group] = groups.get(group, 0.0) + seconds
        if groups:
            out.append("  phases: " + ", ".join(f"{g} {s:.3f} s" for g, s in
                                                sorted(groups.items(), key=lambda kv: -kv[1])))
        out.append("  (fields: compiles, recompiles, graph_breaks, fallbacks, "
                   "recompile_limit_hits, cache, cache_events, phases, generated_code, restarts)")
        return "\n".join(out)

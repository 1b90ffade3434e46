"""print(CompileWatcher.report()): a summary of a few lines — compiles, recompiles and their
reasons, graph breaks, limit hits, fallbacks, cache and time — however long the lists; the
fields keep everything."""
from gpuprobe.torch.compile_report import CompileReport


def storm():
    reason = ("tensor 'x' size mismatch at index 0. expected 8, actual {n}\n"
              + "guard detail " * 200)
    return CompileReport(
        compiles=[{"compile_id": f"0/{n}", "seconds": 0.5 + n, "recompile_reason": None}
                  for n in range(40)],
        graph_breaks={"Unsupported: print\n  Explanation: Dynamo does not know print": 12,
                      "call_function in skip_files": 1},
        recompiles=[{"compile_id": f"0/{n}", "reason": reason.format(n=n)} for n in range(1, 40)],
        cache={"fxgraph_hit": 1, "fxgraph_miss": 39, "aot_autograd_hit": 0,
               "aot_autograd_miss": 40},
        eager_fallbacks=1,
        fallbacks=[{"compile_id": "0/40", "frame": "forward", "error": "limit\nmore"}],
        recompile_limit_hits=["torch._dynamo hit config.recompile_limit (8)\n   function: 'f'"],
        compile_seconds=812.25,
        phases={"0/0": {"Dynamo": 1.0, "Inductor": 3.0}, "0/1": {"Inductor": 2.0}},
        cache_events=[{"compile_id": "0/1", "key": "k" * 1000}] * 40,
    )


def test_print_gives_a_summary_of_a_few_lines():
    r = storm()
    text = str(r)
    lines = text.splitlines()
    assert len(text) < 2500 and len(lines) < 30
    assert lines[0] == ("torch.compile: 40 compiles, 39 recompiles, 812.250 s compiling; slowest "
                        "0/39 39.500 s, 0/38 38.500 s, 0/37 37.500 s")
    assert "    0/1: tensor 'x' size mismatch at index 0. expected 8, actual 1" in lines
    assert "    ... and 34 more" in lines
    assert "  graph breaks: 13, 2 distinct:" in lines
    assert "    12x Unsupported: print" in lines
    assert "  recompile limit hit 1 time(s): those frames run eagerly" in lines
    assert "    0/40: forward: limit" in lines
    assert "  cache: FX graph 1 hits, 39 misses; AOTAutograd 0 hits, 40 misses" in lines
    assert "  phases: Inductor 5.000 s, Dynamo 1.000 s" in lines
    assert "guard detail" not in text and "kkkk" not in text
    assert repr(r) == ("<CompileReport: 40 compiles, 39 recompiles, 13 graph breaks, 812.250 s "
                       "compiling; print() it for a summary>")


def test_the_fields_keep_everything():
    r = storm()
    assert len(r.recompiles) == 39 and "guard detail" in r.recompiles[0]["reason"]
    assert r.graph_break_count == 13
    assert len(r.cache_events) == 40
    import gpuprobe.torch.compile as compile_module
    assert compile_module.CompileReport is CompileReport


def test_an_empty_report_prints():
    r = CompileReport(compiles=[], graph_breaks={}, recompiles=[], cache={}, eager_fallbacks=0,
                      fallbacks=[], recompile_limit_hits=[], compile_seconds=0.0)
    assert str(r).splitlines()[:2] == ["torch.compile: 0 compiles, 0 recompiles, 0.000 s compiling",
                                       "  graph breaks: 0"]

"""A small inference service: a real HTTP server (the standard library's threading server)
serving a torch model, compiled with torch.compile, on the GPU where there is one and on the CPU
otherwise — with gpuprobe on through the GPUPROBE variable, as a production service would run it:

    GPUPROBE="metrics=9464,flight=120,dump=dumps,trigger=p99:request>50ms/10s" \\
        python examples/serving/server.py --port 8080

Endpoints: POST /predict with a JSON body {"batch": B, "seq": S} runs the model on a B x S x 128
input and answers {"sum": ...}; {"remember": N} also keeps N small records of the request in the
service's history, as a cache that is never trimmed would (what makes the GC storm in
load.py's scenario); GET /health answers "ok" once the model is compiled and warm.

Each request is one gpuprobe range "request"; GC pauses (gpuprobe.watch_gc) and torch.compile's
compiles, recompiles and their reasons (gpuprobe.torch.watch_compile) are recorded beside them.
"""
import argparse
import contextlib
import json
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import torch

WIDTH = 128
MAX_BODY = 4096  # the requests are small; a larger body is refused


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.up = torch.nn.Linear(WIDTH, 4 * WIDTH)
        self.down = torch.nn.Linear(4 * WIDTH, WIDTH)
        self.norm = torch.nn.LayerNorm(WIDTH)

    def forward(self, x):
        return self.norm(x + self.down(torch.nn.functional.gelu(self.up(x))))


class Service:
    def __init__(self, device, backend, gpuprobe=None):
        self.device = device
        # The request's range; without gpuprobe (the cost benchmark's baseline), nothing.
        self.range = (gpuprobe.range if gpuprobe is not None
                      else lambda name: contextlib.nullcontext())
        torch.manual_seed(0)
        model = Model().to(device).eval()
        # dynamic=False: every new input shape is a new compile, as services pinned to static
        # shapes for speed have it.
        self.model = torch.compile(model, backend=backend, dynamic=False)
        self.lock = threading.Lock()  # one inference at a time, in arrival order
        self.history = []  # what {"remember": N} keeps, never trimmed

    def predict(self, batch, seq, remember):
        with self.range("request"):
            x = torch.randn(batch, seq, WIDTH, device=self.device)
            with self.lock, torch.no_grad():
                y = self.model(x)
                total = float(y.sum())
            for i in range(remember):
                self.history.append({"seq": seq, "i": i, "tags": [batch, seq]})
            return total


def make_handler(service):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # The headers and the body go out in two writes: without TCP_NODELAY the second waits
        # for the client's delayed ACK of the first (40 ms on Linux) on a kept-alive connection.
        disable_nagle_algorithm = True

        def log_message(self, *args):  # quiet: the load generator logs each request
            pass

        def answer(self, code, body):
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path == "/health":
                self.answer(200, "ok")
            else:
                self.answer(404, {"error": "not found"})

        def do_POST(self):
            if self.path != "/predict":
                self.answer(404, {"error": "not found"})
                return
            length = int(self.headers.get("Content-Length") or 0)
            if not 0 < length <= MAX_BODY:
                self.answer(413, {"error": f"a body of 1 to {MAX_BODY} bytes is needed"})
                return
            try:
                request = json.loads(self.rfile.read(length))
                batch, seq = int(request["batch"]), int(request["seq"])
                remember = int(request.get("remember", 0))
                if not (1 <= batch <= 64 and 1 <= seq <= 512 and 0 <= remember <= 100000):
                    raise ValueError("batch 1..64, seq 1..512, remember 0..100000")
            except (ValueError, KeyError, TypeError) as e:
                self.answer(400, {"error": str(e)})
                return
            self.answer(200, {"sum": service.predict(batch, seq, remember)})

    return Handler


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--backend", default="inductor", help="torch.compile backend")
    parser.add_argument("--warm", default="4x16", help="the shape compiled before serving, BxS")
    parser.add_argument("--without-gpuprobe", action="store_true",
                        help="never import gpuprobe (the baseline of bench/python/serving_cost.py)")
    args = parser.parse_args()

    watcher = None
    if args.without_gpuprobe:
        assert "gpuprobe" not in sys.modules
        service = Service(args.device, args.backend)
    else:
        import gpuprobe
        import gpuprobe.torch

        gpuprobe.watch_gc()
        watcher = gpuprobe.torch.watch_compile()
        service = Service(args.device, args.backend, gpuprobe)
    batch, seq = (int(v) for v in args.warm.split("x"))
    service.predict(batch, seq, 0)  # the first compile, before /health says ok
    server = ThreadingHTTPServer((args.host, args.port), make_handler(service))
    print(f"serving on http://{args.host}:{server.server_address[1]} ({args.device})", flush=True)
    # SIGTERM ends the service as Ctrl-C does, so that gpuprobe writes what it was asked to.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        if watcher is not None:
            watcher.close()


if __name__ == "__main__":
    main()

"""Prometheus itself (Debian's `prometheus` server) scrapes a gpuprobe session's `metrics=`
endpoint — in OpenMetrics, which it asks for first — and the queries the README gives answer
from what the session recorded, exemplars included."""
import json
import os
import select
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import urllib.parse
import urllib.request

import pytest
from net_util import free_port, wait_for

import gpuprobe

PROMETHEUS = shutil.which("prometheus")



def query(port, expr):
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(url, timeout=5) as r:
        return json.load(r)["data"]["result"]


def exemplars(port, expr):
    now = time.time()
    url = f"http://127.0.0.1:{port}/api/v1/query_exemplars?" + urllib.parse.urlencode(
        {"query": expr, "start": now - 600, "end": now + 60})
    with urllib.request.urlopen(url, timeout=5) as r:
        return json.load(r)["data"]



@pytest.mark.skipif(PROMETHEUS is None, reason="skipped: no prometheus server (Debian package "
                    "prometheus)")
def test_prometheus_scrapes_the_endpoint_and_answers_the_readme_queries():
    gp_port, prom_port = free_port(), free_port()
    session = gpuprobe.Session(f"metrics={gp_port}")
    assert session.running
    for _ in range(200):
        with gpuprobe.range("request"):
            time.sleep(0.001)
    # The endpoint as a scraper sees it, before Prometheus.
    with urllib.request.urlopen(f"http://127.0.0.1:{gp_port}/metrics", timeout=5) as r:
        assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    work = tempfile.mkdtemp()
    config = os.path.join(work, "prometheus.yml")
    with open(config, "w") as f:
        f.write("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: gpuprobe\n"
                f"    static_configs:\n      - targets: ['127.0.0.1:{gp_port}']\n")
    prom = subprocess.Popen(
        [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={work}/data",
         f"--web.listen-address=127.0.0.1:{prom_port}", "--enable-feature=exemplar-storage"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        up = wait_for(lambda: [r for r in query(prom_port, 'up{job="gpuprobe"}')
                               if r["value"][1] == "1"])
        assert up, "Prometheus never scraped the endpoint successfully"
        # Ranges reach the endpoint when the collector drains them (every 20 ms) and publishes
        # (at most every 100 ms): a scrape soon after may see fewer, never more.
        count = wait_for(lambda: [r for r in query(
            prom_port, 'gpuprobe_range_duration_seconds_count{name="request"}')
            if float(r["value"][1]) == 200])
        assert count, query(prom_port, 'gpuprobe_range_duration_seconds_count')
        # Two scrapes with new requests between them, so that rate() has something to say.
        for _ in range(200):
            with gpuprobe.range("request"):
                time.sleep(0.001)
        p99 = wait_for(lambda: [r for r in query(
            prom_port, 'histogram_quantile(0.99, sum by (le) '
            '(rate(gpuprobe_range_duration_seconds_bucket{name="request"}[1m])))')
            if r["value"][1] not in ("NaN", "+Inf")])
        assert p99, "no P99 from the histogram"
        # Every request slept 1 ms, so its P99 is at least that — and, on a loaded machine,
        # well under the 100 ms that would mean the buckets are read wrong.
        assert 0.001 <= float(p99[0]["value"][1]) <= 0.1
        # Each bucket's latest request came through as an exemplar naming this thread.
        found = wait_for(lambda: [e for series in exemplars(
            prom_port, 'gpuprobe_range_duration_seconds_bucket{name="request"}')
            for e in series["exemplars"]])
        assert found, "no exemplar reached Prometheus"
        assert {e["labels"]["tid"] for e in found} == {str(threading.get_native_id())}
        assert all(float(e["value"]) >= 0.001 for e in found)
    finally:
        prom.terminate()
        prom.wait(timeout=30)
        session.stop()
        shutil.rmtree(work, ignore_errors=True)


class Attackers:
    """Local clients that mean harm (issue 48, item 10), kept up until stopped: 48 connections
    left half-open from 127.0.0.2-4 and 16 that ask for /metrics and never read, from
    127.0.0.5; each one the server closes is opened again at once."""

    def __init__(self, port):
        self.port, self.stopping, self.opened = port, threading.Event(), 0
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def open(self, i):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.bind((f"127.0.0.{2 + i // 16}", 0))
        s.connect(("127.0.0.1", self.port))
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n" + (b"\r\n" if i >= 48 else b""))
        self.opened += 1
        return s

    def run(self):
        held = [self.open(i) for i in range(64)]
        while not self.stopping.is_set():
            poller = select.poll()
            for s in held:
                poller.register(s, select.POLLRDHUP)
            ended = {fd for fd, ev in poller.poll(100)
                     if ev & (select.POLLRDHUP | select.POLLHUP | select.POLLERR)}
            for i, s in enumerate(held):
                if s.fileno() in ended:
                    s.close()
                    try:
                        held[i] = self.open(i)
                    except OSError:
                        held[i] = socket.socket()  # tried again when the server ends it
        for s in held:
            s.close()

    def stop(self):
        self.stopping.set()
        self.thread.join(timeout=30)


@pytest.mark.skipif(PROMETHEUS is None, reason="skipped: no prometheus server (Debian package "
                    "prometheus)")
def test_prometheus_scrapes_while_local_clients_hold_64_connections():
    """With civetweb's two workers, 32 half-open connections made 2 of 3 scrapes miss their
    timeout. Here every scrape while 64 hostile connections are held succeeds."""
    gp_port, prom_port = free_port(), free_port()
    session = gpuprobe.Session(f"metrics={gp_port}")
    for _ in range(20):
        with gpuprobe.range("request"):
            time.sleep(0.001)
    attackers = Attackers(gp_port)
    work = tempfile.mkdtemp()
    config = os.path.join(work, "prometheus.yml")
    with open(config, "w") as f:
        f.write("global:\n  scrape_interval: 3s\n  scrape_timeout: 3s\nscrape_configs:\n"
                "  - job_name: gpuprobe\n"
                f"    static_configs:\n      - targets: ['127.0.0.1:{gp_port}']\n")
    prom = subprocess.Popen(
        [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={work}/data",
         f"--web.listen-address=127.0.0.1:{prom_port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # Scrapes go on for 18 s (6 or so) with the attackers at work; every one is counted.
        scrapes = wait_for(lambda: [r for r in query(
            prom_port, 'count_over_time(up{job="gpuprobe"}[1h])') if float(r["value"][1]) >= 6],
            timeout=120)
        assert scrapes, "Prometheus did not scrape 6 times"
        attackers.stop()
        ok = query(prom_port, 'min_over_time(up{job="gpuprobe"}[1h])')
        assert float(ok[0]["value"][1]) == 1, \
            query(prom_port, 'sum_over_time(up{job="gpuprobe"}[1h])')  # how many succeeded
        # The attackers held their places only until their deadlines, then came back.
        assert attackers.opened > 64
    finally:
        attackers.stop()
        prom.terminate()
        prom.wait(timeout=30)
        session.stop()
        shutil.rmtree(work, ignore_errors=True)

"""What the Python tests that talk to servers share: a free port, and waiting for one to answer."""
import socket
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, timeout=30, interval=0.25):
    """`what()`'s first true answer within `timeout` seconds (an OSError counts as not yet), or
    None."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            got = what()
            if got:
                return got
        except OSError:
            pass
        time.sleep(interval)
    return None

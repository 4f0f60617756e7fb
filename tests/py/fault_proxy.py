"""An HTTP proxy for object-store tests: forwards each request to the real
server, or -- chosen at random from a fixed seed -- delays it, answers 500 or
503 without forwarding, drops the connection before forwarding, or forwards it
and then cuts the connection before the answer (the outcome-unknown case).

It also records every request's (start, end, method, path) so that the
sequential round trips of an operation can be counted: requests that overlap
in time belong to one round trip (see `round_trips`).

Runs its asyncio loop in a background thread: `with FaultProxy(upstream) as p:`
then point the client at p.endpoint."""

import asyncio
import random
import threading
import time
from dataclasses import dataclass


@dataclass
class Faults:
    delay: float = 0.0  # probability of a delay (up to max_delay seconds) before forwarding
    max_delay: float = 0.3
    error500: float = 0.0
    error503: float = 0.0
    drop: float = 0.0  # close without forwarding
    cut: float = 0.0  # forward, then close without answering


class FaultProxy:
    def __init__(self, upstream, faults=None, seed=1):
        host, port = upstream.replace("http://", "").split(":")
        self.upstream = (host, int(port))
        self.faults = faults or Faults()
        self.rng = random.Random(seed)
        self.log = []  # (start, end, method, path, outcome)
        self.counts = {}
        self.authorizations = []  # Authorization header values seen
        self.requests = []  # (method, path, {lower-case header name: value}) of every request
        self._lock = threading.Lock()
        self._inflight = 0  # requests read and not yet answered
        self._loop = None
        self._server = None
        self.endpoint = None

    # ---- lifecycle ----

    def __enter__(self):
        ready = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(ready,), daemon=True)
        self._thread.start()
        ready.wait(10)
        return self

    def __exit__(self, *exc):
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    def _run(self, ready):
        self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self._loop)
        self._stop = asyncio.Event()

        async def main():
            self._server = await asyncio.start_server(self._client, "127.0.0.1", 0)
            self.endpoint = f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"
            ready.set()
            await self._stop.wait()
            self._server.close()
            # Connections still open (keep-alive clients) end here, not at
            # interpreter exit after the loop is gone.
            pending = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for t in pending:
                t.cancel()
            await asyncio.gather(*pending, return_exceptions=True)

        self._loop.run_until_complete(main())
        self._loop.close()

    # ---- the proxy ----

    def _choose(self):
        f = self.faults
        with self._lock:
            x = self.rng.random()
            for name, p in (("error500", f.error500), ("error503", f.error503), ("drop", f.drop),
                            ("cut", f.cut), ("delay", f.delay)):
                if x < p:
                    return name, self.rng.random() * f.max_delay
                x -= p
            return "pass", 0.0

    async def _read_request(self, reader):
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        length = 0
        headers = []
        for line in lines[1:]:
            if not line:
                continue
            name, _, value = line.partition(":")
            if name.lower() == "content-length":
                length = int(value.strip())
            if name.lower() == "authorization":
                with self._lock:
                    self.authorizations.append(value.strip())
            if name.lower() in ("connection", "keep-alive"):
                continue
            headers.append(line)
        body = await reader.readexactly(length) if length else b""
        with self._lock:
            self.requests.append((method, path, {h.partition(":")[0].lower(): h.partition(":")[2].strip()
                                                 for h in lines[1:] if h}))
        return method, path, headers, body

    def refuse(self, predicate, status=503):
        """From now on, a request whose path satisfies predicate(path) is
        answered `status` without reaching the server."""
        forward = self._forward

        async def refusing(method, path, headers, body):
            if predicate(path):
                return f"HTTP/1.1 {status} Injected\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".encode()
            return await forward(method, path, headers, body)

        self._forward = refusing

    async def _forward(self, method, path, headers, body):
        r, w = await asyncio.open_connection(*self.upstream)
        head = f"{method} {path} HTTP/1.1\r\n" + "".join(h + "\r\n" for h in headers) + "Connection: close\r\n\r\n"
        w.write(head.encode("latin-1") + body)
        await w.drain()
        data = await r.read()  # the upstream closes after one answer
        w.close()
        return data

    async def _client(self, reader, writer):
        try:
            while True:
                try:
                    method, path, headers, body = await self._read_request(reader)
                except (asyncio.IncompleteReadError, ConnectionError, ValueError):
                    return
                start = time.monotonic()
                with self._lock:
                    self._inflight += 1
                try:
                    await self._hold(method, path)
                    outcome, delay = self._choose()
                    with self._lock:
                        self.counts[outcome] = self.counts.get(outcome, 0) + 1
                    if outcome in ("error500", "error503"):
                        code = 500 if outcome == "error500" else 503
                        msg = b"<Error><Code>InternalError</Code></Error>"
                        self._record(start, method, path, outcome)
                        writer.write(f"HTTP/1.1 {code} Injected\r\nContent-Length: {len(msg)}\r\n"
                                     "Connection: close\r\n\r\n".encode() + msg)
                        await writer.drain()
                        return
                    if outcome == "drop":
                        self._record(start, method, path, outcome)
                        return
                    if outcome == "delay":
                        await asyncio.sleep(delay)
                    answer = await self._forward(method, path, headers, body)
                    if outcome == "cut":
                        self._record(start, method, path, outcome)
                        return
                    self._record(start, method, path, outcome)
                    writer.write(answer)
                    await writer.drain()
                    return  # the answer carried the upstream's Connection: close
                finally:
                    with self._lock:
                        self._inflight -= 1
        except (ConnectionError, OSError):
            return
        finally:
            writer.close()

    async def _hold(self, method, path):
        """Where a subclass holds a request before it is answered."""

    def _record(self, start, method, path, outcome):
        # Before the answer is written: by the time the client has its
        # answer, the log has the request (no sleep needed to see it).
        with self._lock:
            self.log.append((start, time.monotonic(), method, path, outcome))

    # ---- analysis ----

    def mark(self):
        """A position in the log, to analyse what happened after it."""
        with self._lock:
            return len(self.log)

    def requests_since(self, mark):
        with self._lock:
            return list(self.log[mark:])

    def wait_idle(self, timeout=60):
        """Until no request is in flight (each one read has been answered or
        refused): what a client sent before this call is then in the log."""
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                if self._inflight == 0:
                    return
            assert time.monotonic() < deadline, "the proxy still had requests in flight"
            time.sleep(0.01)


class WaveProxy(FaultProxy):
    """Holds the requests of each expected wave until the whole wave has
    arrived, then answers them together. A wave that completes proves its
    requests were in flight at once -- one round trip, however slowly the
    client's threads are scheduled, and their log entries overlap, so
    `round_trips` counts them as one. A wave that cannot complete (the client
    waited for an answer before sending the rest) is let go after `backstop`
    seconds, below the client's 30 s request timeout, and named in
    `incomplete`. Requests no open wave expects pass straight through."""

    def __init__(self, upstream, backstop=20.0):
        super().__init__(upstream)
        self.backstop = backstop
        self._waves = []
        self.incomplete = []

    def expect(self, *waves):
        """Each wave a list of (name, predicate(method, path), count); a
        request joins the first open wave with a slot it fits."""
        with self._lock:
            self._waves = [{"slots": [{"name": n, "fits": f, "count": c, "got": []} for n, f, c in w],
                            "done": False, "event": None} for w in waves]
            self.incomplete = []

    def _join(self, method, path):
        for w in self._waves:
            if w["done"]:
                continue
            for s in w["slots"]:
                if len(s["got"]) < s["count"] and s["fits"](method, path):
                    s["got"].append(f"{method} {path}")
                    if w["event"] is None:
                        w["event"] = asyncio.Event()
                    if all(len(x["got"]) == x["count"] for x in w["slots"]):
                        w["done"] = True
                        w["event"].set()
                    return w
        return None

    async def _hold(self, method, path):
        with self._lock:
            w = self._join(method, path)
        if w is None:
            return
        try:
            await asyncio.wait_for(w["event"].wait(), self.backstop)
        except asyncio.TimeoutError:
            with self._lock:
                if not w["done"]:
                    w["done"] = True
                    self.incomplete.append({s["name"]: (len(s["got"]), s["count"], s["got"]) for s in w["slots"]})
                    w["event"].set()


def round_trips(requests):
    """Sequential round trips: requests sorted by start; one that starts after
    every earlier one has ended begins a new round trip."""
    trips = 0
    busy_until = None
    for start, end, *_ in sorted(requests):
        if busy_until is None or start >= busy_until:
            trips += 1
            busy_until = end
        else:
            busy_until = max(busy_until, end)
    return trips

import Foundation

/// Hostile HTTP/2 clients for the gateway's bounds: raw frames (header blocks from the `hpack`
/// package) over real TLS to 127.0.0.1, each attack bounded in frame count and in time.
/// Arguments: port, the gateway's CA file, the attack, the number of clients, seconds, and a
/// file to which each client adds a line once it is connected (the attack has begun: a test waits
/// for that event, not for a time). Prints one JSON line per client: whether it connected,
/// whether the gateway closed the connection (within `grace` seconds after the attack's time) and
/// after how many seconds, whether a GOAWAY came first and with which code.
enum HostileClients {
    static let script = #"""
        import json, select, socket, ssl, sys, threading, time
        from hpack import Encoder, NeverIndexedHeaderTuple

        port, cafile, attack, clients, seconds = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
        connected_file = sys.argv[6]
        connected_lock = threading.Lock()
        # How long after its time an attack waits for the gateway to close: a margin a loaded
        # machine cannot use up, not a measure.
        grace = 30
        PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + (0).to_bytes(3, "big") + bytes([4, 0]) + bytes(4)
        TOKEN = "740f4707bebcf74f9b7c25d48e3358945f6aa01da5ddb387462c7eaf61bb78ad"
        REQUEST = [(":method", "POST"), (":scheme", "https"), (":path", "/3/device/" + TOKEN),
                   (":authority", "localhost"), ("apns-topic", "com.example.app")]
        FRAMES_AT_MOST = 200_000  # every attack is bounded in count as well as in time


        def connect(read_buffer=None):
            context = ssl.create_default_context(cafile=cafile)
            context.set_alpn_protocols(["h2"])
            raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            if read_buffer:  # a client that reads nothing: keep what the kernel takes for it small
                raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, read_buffer)
            raw.connect(("127.0.0.1", port))
            s = context.wrap_socket(raw, server_hostname="localhost")
            s.settimeout(2)
            return s


        def frame(kind, flags, stream, payload=b""):
            return len(payload).to_bytes(3, "big") + bytes([kind, flags]) + stream.to_bytes(4, "big") + payload


        DATA, HEADERS, RST_STREAM, SETTINGS, PING, CONTINUATION = 0, 1, 3, 4, 6, 9
        END_STREAM, END_HEADERS = 0x1, 0x4
        # Literal, never indexed: the same bytes are a valid header block on any connection.
        BLOCK = Encoder().encode([NeverIndexedHeaderTuple(n, v) for n, v in REQUEST])


        def frames(kind):
            """The attack's frames, in batches, bounded in count. Built with little work per frame, so
            that twenty clients in one Python process all get to attack."""
            stream = 1
            if kind == "continuation":
                yield frame(HEADERS, 0, 1, BLOCK)  # no END_HEADERS: a header block that never ends
                junk = frame(CONTINUATION, 0, 1, b"\x00" * 16_000)
                for _ in range(FRAMES_AT_MOST // 10):
                    yield junk * 10
            elif kind in ("rapid-reset", "data-after-reset", "ping-after-reset"):
                extra = {"data-after-reset": None, "ping-after-reset": frame(PING, 0, 0, b"12345678") * 5}.get(kind, b"")
                cancel = (8).to_bytes(4, "big")
                for _ in range(FRAMES_AT_MOST // 200):
                    parts = []
                    for _ in range(100):
                        parts.append(frame(HEADERS, END_HEADERS, stream, BLOCK) + frame(RST_STREAM, 0, stream, cancel))
                        parts.append(frame(DATA, 0, stream, b"x" * 16_000) if extra is None else extra)
                        stream += 2
                    yield b"".join(parts)
            elif kind in ("ping-flood", "unread-pings"):
                pings = frame(PING, 0, 0, b"12345678") * 1000
                for _ in range(FRAMES_AT_MOST // 1000):
                    yield pings
            elif kind == "settings-flood":
                settings = frame(SETTINGS, 0, 0, (1).to_bytes(2, "big") + (4096).to_bytes(4, "big")) * 1000
                for _ in range(FRAMES_AT_MOST // 1000):
                    yield settings
            elif kind == "hpack-bomb":
                # One large value into the HPACK table, then header blocks that repeat it by index.
                encoder = Encoder()
                big = "b" * 4000
                yield frame(HEADERS, END_HEADERS, 1, encoder.encode(REQUEST + [("x-bomb", big)]))
                stream = 3
                block = (encoder.encode(REQUEST) + encoder.encode([("x-bomb", big)]) * 4000)[:16_000]
                for _ in range(FRAMES_AT_MOST // 100):
                    parts = []
                    for _ in range(100):
                        parts.append(frame(HEADERS, END_HEADERS, stream, block))
                        stream += 2
                    yield b"".join(parts)
            else:
                raise SystemExit("unknown attack " + kind)


        def attack_once(kind, number, results):
            started = time.time()
            result = {"client": number, "attack": kind, "connected": False, "closed": False, "goaway": False}
            try:
                s = connect(read_buffer=4096 if kind == "unread-pings" else None)
                result["connected"] = True
                with connected_lock, open(connected_file, "a") as connected:
                    connected.write("%d\n" % number)
                # The attack's time counts from here: a handshake kept waiting by the others' attacks
                # does not shorten it.
                started = time.time()
                s.setblocking(False)
                received = bytearray()
                batches = frames(kind)
                pending = memoryview(PREFACE)
                attacking = True
                # One thread per client, one socket: what the gateway sends is read as it comes (but
                # not by the client that never reads), and the attack ends after its time or its count.
                while time.time() - started < seconds + grace:
                    if attacking and time.time() - started > seconds:
                        attacking = False
                    if attacking and not pending:
                        batch = next(batches, None)
                        if batch is None:
                            attacking = False
                        else:
                            pending = memoryview(batch)
                    reads = [s] if (kind != "unread-pings" or not attacking) else []
                    writes = [s] if attacking and pending else []
                    readable, writable, _ = select.select(reads, writes, [], 0.1)
                    try:
                        if readable:
                            chunk = s.recv(65536)
                            if not chunk:
                                result["closed"] = True
                                break
                            if len(received) < 1_000_000:
                                received.extend(chunk)
                        if writable:
                            sent = s.send(pending[:16384])
                            pending = pending[sent:]
                            result["sent"] = result.get("sent", 0) + sent
                    except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
                        pass
                    except (OSError, ssl.SSLError):
                        result["closed"] = True
                        break
                if result["closed"]:
                    result["closed_after"] = round(time.time() - started, 2)
                result["attacked_for"] = round(min(time.time() - started, seconds), 2)
                # A GOAWAY frame: type 7 on stream 0, found by walking the frames read.
                offset = 0
                while offset + 9 <= len(received):
                    length = int.from_bytes(received[offset:offset + 3], "big")
                    if received[offset + 3] == 7:
                        result["goaway"] = True
                        result["goaway_code"] = int.from_bytes(received[offset + 13:offset + 17], "big")
                        break
                    offset += 9 + length
                s.close()
            except Exception as error:  # reported, not raised: the test judges
                result["error"] = repr(error)
            results.append(result)


        results = []
        threads = [threading.Thread(target=attack_once, args=(attack, n, results)) for n in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for r in sorted(results, key=lambda r: r["client"]):
            print(json.dumps(r))
        """#
}

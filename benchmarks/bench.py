#!/usr/bin/env python3
"""Helpers for benchmarks/run: workload files, the aioapns client, timed runs and the report.

Every measurement is appended to a JSON-lines results file by `measure`; `report` turns that
file into the Markdown table and the target verdicts. Throughput is always notifications that
got a 200 divided by the wall-clock time of the client process (start to exit), so the same
rule applies to every tool. CPU time per notification is the client's user + system time and the
server's, read from /proc before and after the client runs (docs/performance.md, "Where the
microseconds go"), divided by the notifications the client was given.
"""
import argparse
import asyncio
import hashlib
import json
import os
import re
import resource
import ssl
import statistics
import subprocess
import sys
import time


# ---------------------------------------------------------------- workload files

def token(i):
    """A deterministic 64-hex device token."""
    return hashlib.sha256(b"apnsctl-bench-%d" % i).hexdigest()


def cmd_tokens(args):
    with open(args.file, "w") as out:
        chunk = []
        for i in range(args.count):
            chunk.append(token(i))
            if len(chunk) == 10000:
                out.write("\n".join(chunk) + "\n")
                chunk = []
        if chunk:
            out.write("\n".join(chunk) + "\n")


def cmd_jwt(args):
    with open(args.key) as f:
        key = f.read()
    claims, header = {"iss": args.team_id, "iat": int(time.time())}, {"kid": args.key_id}
    try:
        import jwt  # PyJWT, installed with aioapns
    except ImportError:  # --cold-only without the .venv: the same ES256 token from cryptography
        print(es256_jwt(claims, header, key))
        return
    print(jwt.encode(claims, key, algorithm="ES256", headers=header))


def es256_jwt(claims, header, key_pem):
    import base64
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

    def b64(data):
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    signing_input = "%s.%s" % (b64(json.dumps(dict(header, alg="ES256", typ="JWT")).encode()),
                               b64(json.dumps(claims).encode()))
    key = serialization.load_pem_private_key(key_pem.encode(), password=None)
    r, s = decode_dss_signature(key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
    return signing_input + "." + b64(r.to_bytes(32, "big") + s.to_bytes(32, "big"))


def cmd_curl_config(args):
    """A curl config: shared options once, then one url line per notification."""
    with open(args.file, "w") as out:
        out.write('header = "apns-topic: %s"\n' % args.topic)
        out.write('header = "apns-push-type: alert"\n')
        out.write('header = "authorization: bearer %s"\n' % args.jwt)
        out.write('data-binary = "@%s"\n' % args.payload)
        out.write('write-out = "%{http_code}\\n"\n')
        for i in range(args.count):
            out.write('url = "https://127.0.0.1:%d/3/device/%s"\n' % (args.port, token(i)))


def cmd_h2load_uris(args):
    with open(args.file, "w") as out:
        for i in range(args.count):
            out.write("https://127.0.0.1:%d/3/device/%s\n" % (args.port, token(i)))


# ---------------------------------------------------------------- aioapns client

def cmd_aioapns(args):
    """Sends `count` notifications with aioapns on one connection; prints a JSON summary."""
    from aioapns import APNs, NotificationRequest, PushType
    from aioapns.connection import APNsDevelopmentClientProtocol

    # aioapns only knows Apple's hosts: point its sandbox protocol at the local server.
    APNsDevelopmentClientProtocol.APNS_SERVER = "127.0.0.1"
    APNsDevelopmentClientProtocol.APNS_PORT = args.port

    with open(args.key) as f:
        key = f.read()
    message = json.loads(open(args.payload).read())

    async def main():
        context = ssl.create_default_context(cafile=args.ca)
        client = APNs(key=key, key_id=args.key_id, team_id=args.team_id, topic=args.topic,
                      use_sandbox=True, ssl_context=context, max_connections=1)
        ok = failed = 0
        next_index = 0

        async def worker():
            nonlocal ok, failed, next_index
            while next_index < args.count:
                i = next_index
                next_index += 1
                result = await client.send_notification(NotificationRequest(
                    device_token=token(i), message=message, push_type=PushType.ALERT))
                if result.is_successful:
                    ok += 1
                else:
                    failed += 1

        await asyncio.gather(*(worker() for _ in range(args.concurrency)))
        return ok, failed

    ok, failed = asyncio.run(main())
    print(json.dumps({"ok": ok, "failed": failed}))


# ---------------------------------------------------------------- timed runs

def successes(tool, stdout, results_file):
    """Notifications answered 200, as the client itself reports them."""
    if tool == "h2load":
        match = re.search(r"requests: .* (\d+) succeeded", stdout)
        return int(match.group(1)) if match else 0
    if tool == "curl":
        return sum(1 for line in stdout.splitlines() if line.strip() == "200")
    if tool == "aioapns":
        for line in reversed(stdout.splitlines()):
            if line.startswith("{"):
                return json.loads(line).get("ok", 0)
        return 0
    if tool == "apnsctl":
        count = 0
        if results_file and os.path.exists(results_file):
            with open(results_file) as f:
                for line in f:
                    try:
                        record = json.loads(line)
                    except ValueError:
                        continue
                    status = record.get("status")
                    if status is None and isinstance(record.get("response"), dict):
                        status = record["response"].get("status")
                    if status in (200, "200") or record.get("ok") is True or record.get("success") is True:
                        count += 1
        return count
    return 0


def parse_time_v(path):
    """Peak RSS (KiB) from /usr/bin/time -v."""
    try:
        with open(path) as f:
            for line in f:
                if "Maximum resident set size" in line:
                    return int(line.rsplit(":", 1)[1])
    except OSError:
        pass
    return None


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def process_tree_ticks(root):
    """utime + stime (fields 14 and 15 of /proc/PID/stat, in clock ticks) of a process and of
    every process below it: the gateway is one process (its threads are counted in it), nginx a
    master and its workers. None when the root is gone."""
    stats = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                text = f.read()
        except OSError:
            continue
        # The command name (field 2) is in parentheses and may hold spaces: split after it.
        fields = text[text.rindex(")") + 2:].split()
        # fields[0] is field 3 (state), so field N is fields[N - 3].
        stats[int(entry)] = (int(fields[1]), int(fields[11]) + int(fields[12]))
    if root not in stats:
        return None
    total, frontier = 0, [root]
    while frontier:
        pid = frontier.pop()
        total += stats[pid][1]
        frontier.extend(child for child, (parent, _) in stats.items() if parent == pid)
    return total


def cmd_measure(args):
    """Runs the command `repeats` times; appends one record (all runs) to the results file."""
    rates, rss, errors = [], [], []
    client_cpu, server_cpu = [], []   # µs per notification, one value per run
    for run in range(args.repeats):
        if args.results_file and os.path.exists(args.results_file):
            os.remove(args.results_file)
        time_file = args.log + ".time"
        command = ["/usr/bin/time", "-v", "-o", time_file] + args.command
        server_before = process_tree_ticks(args.server_pid) if args.server_pid else None
        # The client's user + system time is the rusage of the children this process waited for
        # (the client, through /usr/bin/time): what /usr/bin/time prints, at microsecond
        # resolution instead of its 10 ms.
        children_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        with open(args.log + ".stderr", "w") as err:
            proc = subprocess.run(command, stdout=subprocess.PIPE, stderr=err, text=True,
                                  timeout=args.timeout)
        elapsed = time.perf_counter() - start
        children_after = resource.getrusage(resource.RUSAGE_CHILDREN)
        server_after = process_tree_ticks(args.server_pid) if args.server_pid else None
        client_seconds = (children_after.ru_utime - children_before.ru_utime
                          + children_after.ru_stime - children_before.ru_stime)
        client_cpu.append(client_seconds * 1e6 / args.count)
        server_us = None
        if server_before is not None and server_after is not None:
            server_us = (server_after - server_before) / CLOCK_TICKS * 1e6 / args.count
            server_cpu.append(server_us)
        with open(args.log, "a") as log:
            log.write("# run %d: exit %d, %.3f s\n%s\n" % (run + 1, proc.returncode, elapsed, proc.stdout[-4000:]))
            log.write(open(args.log + ".stderr").read()[-4000:])
        ok = successes(args.tool, proc.stdout, args.results_file)
        peak = parse_time_v(time_file)
        # curl exits 92 when a server resets a stream it has answered (nginx does, for every
        # `return`), though every answer arrived: the answers decide, not the exit status.
        if ok != args.count or (proc.returncode != 0 and args.tool != "curl"):
            errors.append("run %d: exit %d, %d of %d answered 200" % (run + 1, proc.returncode, ok, args.count))
        rates.append(ok / elapsed)
        if peak:
            rss.append(peak)
        print("  %s/%s run %d: %d ok in %.2f s = %.0f notifications/s, CPU µs/notification: client %.1f, server %s%s" % (
            args.tool, args.server, run + 1, ok, elapsed, ok / elapsed, client_cpu[-1],
            "?" if server_us is None else "%.1f" % server_us,
            ", peak RSS %.1f MiB" % (peak / 1024) if peak else ""), file=sys.stderr)
    record = {"label": args.label or args.tool, "tool": args.tool, "server": args.server,
              "connections": args.connections, "streams": args.streams, "count": args.count,
              "rates": rates, "rss_kib": rss, "errors": errors,
              "client_cpu_us": client_cpu, "server_cpu_us": server_cpu}
    with open(args.out, "a") as out:
        out.write(json.dumps(record) + "\n")


def cmd_skip(args):
    record = {"label": args.label or args.tool, "tool": args.tool, "server": args.server,
              "connections": args.connections, "streams": args.streams, "count": args.count,
              "rates": [], "rss_kib": [], "errors": [], "note": args.note}
    with open(args.out, "a") as out:
        out.write(json.dumps(record) + "\n")


def cmd_time_runs(args):
    """Times one command `repeats` times, process start to exit; appends a record."""
    durations, failures = [], 0
    for _ in range(args.repeats):
        start = time.perf_counter()
        proc = subprocess.run(args.command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        durations.append(time.perf_counter() - start)
        if proc.returncode != 0:
            failures += 1
            sys.stderr.write(proc.stderr[-2000:])
    record = {"label": args.label, "durations": durations, "failures": failures}
    with open(args.out, "a") as out:
        out.write(json.dumps(record) + "\n")
    print("  %s: median %.1f ms over %d runs%s" % (args.label, statistics.median(durations) * 1000, len(durations),
          ", %d failed" % failures if failures else ""), file=sys.stderr)


def cmd_time_alternating(args):
    """Times several commands in turn, `repeats` rounds of one run each, process start to exit, so
    that a change in the machine's load touches all of them alike; appends a record per command.
    The commands follow `--`, separated by `:::`, in the order of their --label."""
    commands, current = [], []
    for word in args.command[1:] if args.command[:1] == ["--"] else args.command:
        if word == ":::":
            commands.append(current)
            current = []
        else:
            current.append(word)
    commands.append(current)
    if len(commands) != len(args.label):
        sys.exit("time-alternating: %d labels for %d commands" % (len(args.label), len(commands)))
    durations = [[] for _ in commands]
    failures = [0 for _ in commands]
    for _ in range(args.repeats):
        for index, command in enumerate(commands):
            start = time.perf_counter()
            proc = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            durations[index].append(time.perf_counter() - start)
            if proc.returncode != 0:
                failures[index] += 1
                sys.stderr.write(proc.stderr[-2000:])
    with open(args.out, "a") as out:
        for label, runs, failed in zip(args.label, durations, failures):
            out.write(json.dumps({"label": label, "durations": runs, "failures": failed,
                                  "group": args.group}) + "\n")
            print("  %s: median %.1f ms over %d runs%s" % (label, statistics.median(runs) * 1000, len(runs),
                  ", %d failed" % failed if failed else ""), file=sys.stderr)


# ---------------------------------------------------------------- profile summary

# What a share of the gateway's time is, by frames found in a sample's stack (demangled).
PERF_COMPONENTS = [
    ("the gateway's own stream handler (validation and answer included)", ["GatewayStreamHandler."]),
    ("  request validation (RequestValidator.evaluate)", ["RequestValidator.evaluate"]),
    ("  encoding the answer's headers (HPACK)", ["HPACKEncoder."]),
    ("decoding request headers (HPACK)", ["HPACKDecoder."]),
    ("swift-nio-http2 header-block validation", ["HeaderBlockValidator."]),
    ("swift-nio-http2 stream bookkeeping (StreamMap, open-stream list removals)", ["StreamMap", "CircularBuffer.remove(at:)"]),
    ("creating a child channel per stream", ["HTTP2StreamChannel.configure"]),
    ("TLS records (BoringSSL encrypt/decrypt)", ["SSL_read", "SSL_write", "tls_open_record", "tls_seal_record"]),
    ("system calls (socket reads and writes)", ["entry_SYSCALL"]),
    ("reference counting (swift_retain/release, any caller)", ["swift_retain", "swift_release"]),
    ("memory allocation (malloc/free, any caller)", ["malloc", "_int_free", "cfree", "free"]),
]


def read_perf_stacks(path):
    stacks, current = [], []
    for line in open(path, errors="replace"):
        line = line.strip()
        if not line:
            if current:
                stacks.append(current)
                current = []
            continue
        parts = line.split(None, 1)
        symbol = parts[1] if len(parts) > 1 else parts[0]
        current.append(re.sub(r"\+0x[0-9a-f]+$", "", symbol))
    if current:
        stacks.append(current)
    return stacks


def cmd_perf_summary(args):
    stacks = read_perf_stacks(args.file)
    total = len(stacks) or 1
    print("| where | share of samples |")
    print("| --- | ---: |")
    for label, patterns in PERF_COMPONENTS:
        if label.startswith("reference") or label.startswith("memory"):
            # self time only: the leaf frame
            hits = sum(1 for st in stacks if st and any(st[0] == p or st[0].startswith(p + "@") for p in patterns))
        else:
            hits = sum(1 for st in stacks if any(p in frame for frame in st for p in patterns))
        print("| %s | %.1f%% |" % (label.replace("  ", "&nbsp;&nbsp;"), 100.0 * hits / total))
    print("\n%d samples." % len(stacks))


# ---------------------------------------------------------------- report

# The label benchmarks/run gives the bulk send with certificate (mutual TLS) authentication.
CERT_LABEL = "apnsctl bulk (certificate)"


def fmt_rate(value):
    return "{:,.0f}".format(value)


def cmd_report(args):
    rows = [json.loads(line) for line in open(args.results) if line.strip()]
    throughput = [r for r in rows if "rates" in r]
    cold = [r for r in rows if "durations" in r and r.get("group", "cold") == "cold"]
    checks = [r for r in rows if "durations" in r and r.get("group") == "check"]

    def median(row):
        return statistics.median(row["rates"]) if row["rates"] else None

    def find(label, server):
        for r in throughput:
            if r["label"] == label and r["server"] == server and r["rates"]:
                return r
        return None

    def cpu(row, key):
        values = row.get(key) or []
        return "%.1f" % statistics.median(values) if values else ""

    if not throughput:
        print("(no throughput runs: --cold-only or --check-only)")
    else:
        print("| tool | server | connections | streams | notifications | median notifications/s | min – max | vs h2load, same server"
              " | client CPU µs / notification | server CPU µs / notification |")
        print("| --- | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |")
    for r in throughput:
        h2 = find("h2load", r["server"])
        if not r["rates"]:
            print("| %s | %s | %s | %s | %s | %s | | | | |" % (r["label"], r["server"], r["connections"], r["streams"],
                                                            "{:,}".format(r["count"]), r.get("note", "not run")))
            continue
        ratio = "%.2f×" % (median(r) / median(h2)) if h2 else ""
        flag = " ⚠" if r["errors"] else ""
        print("| %s | %s | %s | %s | %s | %s%s | %s – %s | %s | %s | %s |" % (
            r["label"], r["server"], r["connections"], r["streams"], "{:,}".format(r["count"]),
            fmt_rate(median(r)), flag, fmt_rate(min(r["rates"])), fmt_rate(max(r["rates"])), ratio,
            cpu(r, "client_cpu_us"), cpu(r, "server_cpu_us")))
    errors = [(r["label"], r["server"], e) for r in throughput for e in r["errors"]]
    if errors:
        print("\n⚠ runs with errors (failed or non-200 answers; their rate counts only the 200s):")
        for label, server, e in errors:
            print("- %s on %s: %s" % (label, server, e))

    if cold:
        print("\nCold start, one notification, process start to exit:\n")
        curl_rows = [r for r in cold if r["label"].startswith("curl") and r["durations"]]
        curl_ms = statistics.median(curl_rows[-1]["durations"]) * 1000 if curl_rows else None
        print("| client | runs | median ms | min – max ms | vs curl --http2 |")
        print("| --- | ---: | ---: | --- | ---: |")
        for r in cold:
            d = [x * 1000 for x in r["durations"]]
            if not d:
                continue
            ratio = "%.2f×" % (statistics.median(d) / curl_ms) if curl_ms else ""
            print("| %s | %d | %.1f | %.1f – %.1f | %s |%s" % (r["label"], len(d), statistics.median(d), min(d), max(d),
                                                            ratio, " (%d failed)" % r["failures"] if r["failures"] else ""))

    if checks:
        print("\nCheck over one store, process start to exit, the two commands in turn:\n")
        print("| command | runs | median ms | min – max ms | vs --skip-secrets |")
        print("| --- | ---: | ---: | --- | ---: |")
        for r in checks:
            d = [x * 1000 for x in r["durations"]]
            if not d:
                continue
            # Each build's check against the same build's --skip-secrets.
            skip = [s for s in checks if "--skip-secrets" in s["label"] and s["durations"]
                    and ("baseline" in s["label"]) == ("baseline" in r["label"])]
            skip_ms = statistics.median(skip[-1]["durations"]) * 1000 if skip else None
            ratio = "%.2f×" % (statistics.median(d) / skip_ms) if skip_ms else ""
            print("| %s | %d | %.1f | %.1f – %.1f | %s |%s" % (r["label"], len(d), statistics.median(d), min(d), max(d),
                                                            ratio, " (%d failed)" % r["failures"] if r["failures"] else ""))

    print("\nTargets (the performance issue's table: bulk figures against nginx, where the server is not the limit):\n")
    h2_local, h2_nginx = find("h2load", "LocalGateway"), find("h2load", "nginx")
    bulk_nginx, curl_nginx = find("apnsctl bulk", "nginx"), find("curl --parallel", "nginx")
    cert_local, cert_nginx = find(CERT_LABEL, "LocalGateway"), find(CERT_LABEL, "nginx")
    bulk_local, curl_local = find("apnsctl bulk", "LocalGateway"), find("curl --parallel", "LocalGateway")
    rss_row = find("apnsctl bulk, RSS run", "LocalGateway")

    def verdict(ok):
        return "**PASS**" if ok else "**FAIL**"

    def target(name, row, reference, threshold, digits=2, at_least=True):
        if not (row and reference):
            print("- %s: not measured" % name)
            return
        ratio = median(row) / median(reference)
        ok = ratio >= threshold if at_least else ratio <= threshold
        print(("- %s: %s — %s vs %s notifications/s (%." + str(digits) + "f×)") % (
            name, verdict(ok), fmt_rate(median(row)), fmt_rate(median(reference)), ratio))

    target("apnsctl bulk (token) → nginx ≥ ½ h2load → nginx", bulk_nginx, h2_nginx, 0.5)
    target("%s → nginx ≥ ½ h2load → nginx" % CERT_LABEL, cert_nginx, h2_nginx, 0.5)
    target("apnsctl bulk → nginx ≥ 4× curl --parallel → nginx", bulk_nginx, curl_nginx, 4, digits=1)
    target("LocalGateway ≥ ½ nginx (h2load client)", h2_local, h2_nginx, 0.5)
    # The guard of a change: this build's bulk send within 5% of the baseline's (BENCH_BASELINE),
    # both against nginx in the same run, one right after the other.
    for label in ("apnsctl bulk", CERT_LABEL):
        base = next((r for r in throughput if r["label"].startswith(label + ", baseline") and r["server"] == "nginx"
                     and r["rates"]), None)
        if base:
            target("%s → nginx ≥ 0.95× the baseline's (%s)" % (label, base["label"].split(", baseline ")[-1]),
                   find(label, "nginx"), base, 0.95)
        elif label == "apnsctl bulk":
            print("- apnsctl bulk → nginx within 5% of a baseline build: not measured (set BENCH_BASELINE)")
    probe, curl_one = None, None
    for r in cold:
        if r["label"] == "apnsctl send (stored credential)":
            probe = r
        elif r["label"].startswith("curl"):
            curl_one = r
    if probe and curl_one and probe["durations"] and curl_one["durations"]:
        p_ms = statistics.median(probe["durations"]) * 1000
        c_ms = statistics.median(curl_one["durations"]) * 1000
        print("- cold send from the keyring store ≤ 2× one curl --http2 request: %s — %.1f vs %.1f ms (%.2f×)" % (
            verdict(p_ms <= 2 * c_ms), p_ms, c_ms, p_ms / c_ms))
    else:
        print("- cold send ≤ 2× one curl --http2 request: not measured")
    own = [r for r in checks if "baseline" not in r["label"] and r["durations"]]
    with_secrets = next((r for r in own if "--skip-secrets" not in r["label"]), None)
    without = next((r for r in own if "--skip-secrets" in r["label"]), None)
    if with_secrets and without:
        w_ms = statistics.median(with_secrets["durations"]) * 1000
        s_ms = statistics.median(without["durations"]) * 1000
        ok = w_ms <= 3 * s_ms and not with_secrets["failures"]
        print("- check with secrets ≤ 3× check --skip-secrets, same store (a guard: the run fails without it): %s"
              " — %.0f vs %.0f ms (%.2f×)" % (verdict(ok), w_ms, s_ms, w_ms / s_ms))
        if not ok and args.failed_guards:
            with open(args.failed_guards, "a") as failed:
                failed.write("check with secrets %.2f× check --skip-secrets (at most 3×)\n" % (w_ms / s_ms))
    else:
        print("- check with secrets ≤ 3× check --skip-secrets: not measured")
    if rss_row and rss_row["rss_kib"]:
        peak = max(rss_row["rss_kib"]) / 1024
        partial = "" if rss_row["count"] >= 1000000 else " (a shorter run; the target is for 1,000,000)"
        print("- apnsctl peak RSS < 64 MiB for %s tokens: %s — %.1f MiB%s" % (
            "{:,}".format(rss_row["count"]), verdict(peak < 64), peak, partial))
    else:
        print("- apnsctl peak RSS < 64 MiB for 1,000,000 tokens: not measured")

    # Across connections: against a gateway that answers after a fixed latency, N connections of S
    # streams are bounded by N × S / latency; each run must reach 0.9× its bound.
    for r in throughput:
        found = re.match(r"LocalGateway, (\d+) ms$", r["server"])
        if not (found and r["rates"]):
            continue
        bound = int(r["connections"]) * int(r["streams"]) / (int(found.group(1)) / 1000)
        target("%s, %d × %d streams at %s ms ≥ 0.9× the latency bound" % (
            r["label"], int(r["connections"]), int(r["streams"]), found.group(1)), r, {"rates": [bound]}, 0.9)

    # Against the local gateway the gateway shares the two cores and is itself the limit.
    if bulk_local and h2_local:
        print("\nFor information, against LocalGateway: apnsctl bulk %s notifications/s, %.2f× h2load" % (
            fmt_rate(median(bulk_local)), median(bulk_local) / median(h2_local)), end="")
        if cert_local:
            print(" (certificate: %.2f×)" % (median(cert_local) / median(h2_local)), end="")
        if curl_local:
            print(", %.1f× curl --parallel" % (median(bulk_local) / median(curl_local)), end="")
        print(".")


# ---------------------------------------------------------------- main

def main():
    parser = argparse.ArgumentParser(description=__doc__)
    sub = parser.add_subparsers(dest="command_name", required=True)

    p = sub.add_parser("tokens"); p.add_argument("count", type=int); p.add_argument("file"); p.set_defaults(func=cmd_tokens)
    p = sub.add_parser("jwt"); p.add_argument("key"); p.add_argument("key_id"); p.add_argument("team_id"); p.set_defaults(func=cmd_jwt)
    p = sub.add_parser("curl-config")
    for name in ("file", "topic", "jwt", "payload"):
        p.add_argument("--" + name, required=True)
    p.add_argument("--port", type=int, required=True); p.add_argument("--count", type=int, required=True)
    p.set_defaults(func=cmd_curl_config)
    p = sub.add_parser("h2load-uris"); p.add_argument("--file", required=True)
    p.add_argument("--port", type=int, required=True); p.add_argument("--count", type=int, required=True)
    p.set_defaults(func=cmd_h2load_uris)
    p = sub.add_parser("aioapns")
    for name in ("ca", "key", "key-id", "team-id", "topic", "payload"):
        p.add_argument("--" + name, required=True)
    p.add_argument("--port", type=int, required=True); p.add_argument("--count", type=int, required=True)
    p.add_argument("--concurrency", type=int, default=1000)
    p.set_defaults(func=cmd_aioapns)

    for name, func in (("measure", cmd_measure), ("skip", cmd_skip)):
        p = sub.add_parser(name)
        p.add_argument("--out", required=True); p.add_argument("--tool", required=True); p.add_argument("--label")
        p.add_argument("--server", required=True); p.add_argument("--connections", type=int, default=1)
        p.add_argument("--streams", default=""); p.add_argument("--count", type=int, required=True)
        if name == "measure":
            p.add_argument("--repeats", type=int, default=3); p.add_argument("--log", required=True)
            p.add_argument("--results-file"); p.add_argument("--timeout", type=float, default=1800)
            p.add_argument("--server-pid", type=int, help="the server's process (with its children) for its CPU time")
            p.add_argument("command", nargs=argparse.REMAINDER)
        else:
            p.add_argument("--note", required=True)
        p.set_defaults(func=func)
    p = sub.add_parser("time-alternating")
    p.add_argument("--out", required=True); p.add_argument("--repeats", type=int, default=10)
    p.add_argument("--label", action="append", required=True)
    p.add_argument("--group", default="cold", help="cold (the probe's start-up) or check (a store's check)")
    p.add_argument("command", nargs=argparse.REMAINDER); p.set_defaults(func=cmd_time_alternating)
    p = sub.add_parser("time-runs")
    p.add_argument("--out", required=True); p.add_argument("--label", required=True); p.add_argument("--repeats", type=int, default=10)
    p.add_argument("command", nargs=argparse.REMAINDER); p.set_defaults(func=cmd_time_runs)
    p = sub.add_parser("report"); p.add_argument("results")
    p.add_argument("--failed-guards", help="a file to which each failed guard is appended, a line each")
    p.set_defaults(func=cmd_report)
    p = sub.add_parser("perf-summary"); p.add_argument("file"); p.set_defaults(func=cmd_perf_summary)

    args = parser.parse_args()
    if getattr(args, "command", None) and args.command[:1] == ["--"]:
        args.command = args.command[1:]
    args.func(args)


if __name__ == "__main__":
    main()

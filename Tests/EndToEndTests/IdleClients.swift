import Foundation
import TestSupport

/// Many idle HTTP/2 connections to the gateway, from one Python process (standard library only):
/// each completes TLS (ALPN h2), sends the client preface and an empty SETTINGS, waits for the
/// gateway's SETTINGS, and then says nothing. Driven by commands, one a line, on its standard
/// input; it answers each with one JSON line on its standard output:
///
/// - `open N PARALLEL`: opens N more, PARALLEL at a time (1: one after another, in order), and
///   reports how many opened and failed;
/// - `status`: the numbers (from 0, in the order opened) of the connections the gateway has
///   closed, and how many are still open;
/// - `close`: closes every connection (abruptly, as a client that goes away does);
/// - anything else: closes every connection and ends.
///
/// It raises its own soft limit on file descriptors to the hard limit, so that it can hold
/// thousands of connections.
final class IdleClients: @unchecked Sendable {
    static let script = #"""
        import asyncio, json, resource, ssl, sys, time

        port, cafile = int(sys.argv[1]), sys.argv[2]
        PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + (0).to_bytes(3, "big") + bytes([4, 0]) + bytes(4)
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft < hard:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        context = ssl.create_default_context(cafile=cafile)
        context.set_alpn_protocols(["h2"])
        held, closed, counter = {}, [], [0]


        async def watch(number, reader):
            try:
                while await reader.read(65536):
                    pass
            except Exception:
                pass
            if number in held:
                del held[number]
                closed.append(number)


        async def one(gate, number):
            async with gate:
                try:
                    reader, writer = await asyncio.wait_for(
                        asyncio.open_connection("127.0.0.1", port, ssl=context, server_hostname="localhost"), 60)
                    writer.write(PREFACE)
                    await asyncio.wait_for(reader.readexactly(9), 60)  # the gateway's SETTINGS: HTTP/2 is up
                except Exception:
                    return False
            held[number] = (writer, asyncio.ensure_future(watch(number, reader)))
            return True


        def close_all():
            for writer, task in list(held.values()):
                task.cancel()
                writer.transport.abort()
            held.clear()


        def say(answer):
            print(json.dumps(answer), flush=True)


        async def main():
            loop = asyncio.get_running_loop()
            while True:
                words = (await loop.run_in_executor(None, sys.stdin.readline)).split()
                if words[:1] == ["open"]:
                    count, parallel = int(words[1]), int(words[2])
                    gate, started = asyncio.Semaphore(parallel), time.time()
                    numbers = range(counter[0], counter[0] + count)
                    counter[0] += count
                    if parallel == 1:
                        results = [await one(gate, n) for n in numbers]
                    else:
                        results = await asyncio.gather(*(one(gate, n) for n in numbers))
                    await asyncio.sleep(0.2)
                    say({"opened": sum(results), "failed": count - sum(results), "open": len(held),
                         "seconds": round(time.time() - started, 1)})
                elif words[:1] == ["status"]:
                    await asyncio.sleep(0.2)
                    say({"open": len(held), "closed": sorted(closed)})
                elif words[:1] == ["close"]:
                    close_all()
                    say({"closed": True})
                else:
                    close_all()
                    return

        asyncio.run(main())
        """#

    let process = Process()
    private let input = Pipe()
    private let outputPath: String
    private var answered = 0

    init(_ folder: TemporaryFolder, port: Int, caFile: String) throws {
        let script = folder.path("idle-clients.py")
        try Self.script.write(toFile: script, atomically: true, encoding: .utf8)
        outputPath = folder.path("idle-clients.jsonl")
        FileManager.default.createFile(atPath: outputPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script, String(port), caFile]
        process.standardInput = input
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    /// Sends one command and waits (at most `timeout` seconds) for its answer.
    func command(_ line: String, timeout: TimeInterval = 300) throws -> [String: Any] {
        guard process.isRunning else { throw CLIError(message: "the idle clients ended before \"\(line)\"") }
        input.fileHandleForWriting.write(Data((line + "\n").utf8))
        answered += 1
        let answer = waitForValue(timeout: timeout) { () -> Substring?? in
            let lines = (try? String(contentsOfFile: outputPath, encoding: .utf8))?.split(separator: "\n") ?? []
            if lines.count >= answered { return .some(lines[answered - 1]) }
            return process.isRunning ? nil : .some(nil)
        }
        if let answer = answer ?? nil {
            return try JSONSerialization.jsonObject(with: Data(answer.utf8)) as? [String: Any] ?? [:]
        }
        throw CLIError(message: "the idle clients did not answer \"\(line)\" within \(timeout) s")
    }

    deinit {
        if process.isRunning { input.fileHandleForWriting.write(Data("quit\n".utf8)) }
        process.stop(signal: nil, "the idle clients")
    }
}

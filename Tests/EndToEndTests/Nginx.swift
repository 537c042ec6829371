import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Debian's stock nginx playing APNs on a free loopback port: HTTP/2 over TLS with the test
/// PKI's server identity, client certificates checked against the stand-in Apple CA, and
/// `return 200` for every request. nginx answers before reading the body and then resets each
/// stream with RST_STREAM NO_ERROR, as RFC 9113 section 8.1 allows: a peer that behaves like
/// no gateway written for this project does.
///
/// It runs in the foreground as one process (`master_process off`, `daemon off`) with its own
/// prefix, configuration, pid file and logs in a temporary folder; no system service is
/// involved. `stop()` ends it and waits for it; the value going away does the same.
///
/// It is stopped with SIGKILL: a child inherits the signal mask of the thread that starts it,
/// and the test runner's threads block SIGTERM and SIGQUIT, which nginx's single-process mode
/// never unblocks, so those would stay pending for ever. Nothing is lost: nginx keeps no state
/// here worth a graceful shutdown.
final class NginxProcess: @unchecked Sendable {
    let folder: TemporaryFolder
    let port: Int
    /// The CA that signed nginx's certificate, for `--ca`.
    let caFile = CLI.cert("ca/gateway-test-ca.pem")
    var address: String { "127.0.0.1:\(port)" }
    var connection: [String] { ["--gateway", address, "--ca", caFile] }

    /// Where Debian's package puts the binary; setup installs it (nginx-light).
    static let binary: String? = ["/usr/sbin/nginx", "/usr/bin/nginx"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    init() throws {
        guard let binary = Self.binary else {
            throw CLIError(
                message:
                    "nginx is not installed: run scripts/setup (it installs Debian's nginx-light), then run the test again"
            )
        }
        folder = try TemporaryFolder()
        try FileManager.default.createDirectory(atPath: folder.path("tmp"), withIntermediateDirectories: true)
        (port, process) = try Self.launch(binary: binary, folder: folder)
    }

    private let process: Process

    /// Starts nginx on a free port. A port picked free can be taken before nginx binds it, so
    /// a few are tried.
    private static func launch(binary: String, folder: TemporaryFolder) throws -> (Int, Process) {
        var lastError = ""
        for _ in 0..<5 {
            let port = try unusedLoopbackPort()
            try configuration(port: port, folder: folder).write(
                toFile: folder.path("nginx.conf"),
                atomically: true,
                encoding: .utf8
            )
            let process = Process()
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = [
                "-p", folder.url.path + "/", "-c", folder.path("nginx.conf"), "-e", folder.path("error.log"),
            ]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            if waitUntilListening(port: port, while: process) { return (port, process) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            lastError = (try? String(contentsOfFile: folder.path("error.log"), encoding: .utf8)) ?? ""
        }
        throw CLIError(message: "nginx did not start: \(lastError)")
    }

    /// nginx 1.25.1 moved `http2` from `listen` to a directive of its own; Debian 12 ships 1.22.
    static var listenSyntaxHasHTTP2Directive: Bool {
        guard let binary, let result = try? CLI.runProgram(binary, ["-v"]) else { return false }
        let text = result.stderr + result.stdout
        guard let range = text.range(of: #"nginx/[0-9.]+"#, options: .regularExpression) else { return false }
        let version = text[range].dropFirst("nginx/".count).split(separator: ".").compactMap { Int($0) } + [0, 0, 0]
        return (version[0], version[1], version[2]) >= (1, 25, 1)
    }

    static func configuration(port: Int, folder: TemporaryFolder) -> String {
        let listen =
            listenSyntaxHasHTTP2Directive
            ? "listen 127.0.0.1:\(port) ssl;\n        http2 on;"
            : "listen 127.0.0.1:\(port) ssl http2;"
        return """
            daemon off;
            master_process off;
            pid \(folder.path("nginx.pid"));
            error_log \(folder.path("error.log")) warn;
            events { worker_connections 1024; }
            http {
                access_log off;
                client_body_temp_path \(folder.path("tmp"))/body;
                proxy_temp_path \(folder.path("tmp"))/proxy;
                fastcgi_temp_path \(folder.path("tmp"))/fastcgi;
                uwsgi_temp_path \(folder.path("tmp"))/uwsgi;
                scgi_temp_path \(folder.path("tmp"))/scgi;
                # One connection for the whole run: nginx's default (1000) would end it.
                keepalive_requests 10000000;
                keepalive_timeout 300s;
                server {
                    \(listen)
                    ssl_certificate \(CLI.cert("gateway/server.pem"));
                    ssl_certificate_key \(CLI.cert("gateway/server.key"));
                    ssl_verify_client on;
                    ssl_client_certificate \(CLI.cert("ca/wwdr-test-ca.pem"));
                    location / { return 200; }
                }
            }

            """
    }

    /// Waits until a TCP connect succeeds, while nginx runs (the bound only ends a hung test).
    static func waitUntilListening(port: Int, while process: Process) -> Bool {
        var listening = false
        waitUntil {
            guard process.isRunning else { return true }
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = UInt16(port).bigEndian
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
            close(fd)
            listening = connected
            return connected
        }
        return listening
    }

    /// Ends nginx and waits for it to exit.
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    deinit { stop() }
}

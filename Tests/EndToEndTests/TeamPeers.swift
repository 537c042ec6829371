import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A member's own Secret Service: a private D-Bus session with its own unlocked gnome-keyring,
/// as scripts/with-secret-service starts one, kept for the life of the value.
final class MemberKeyring: @unchecked Sendable {
    let folder: String
    let bus = Process()
    let keyring = Process()
    let environment: [String: String]

    init(_ parent: TemporaryFolder, name: String) throws {
        folder = parent.path("keyring-\(name)")
        for sub in ["data", "runtime", "cache", "config"] {
            try FileManager.default.createDirectory(atPath: "\(folder)/\(sub)", withIntermediateDirectories: true)
        }
        chmod("\(folder)/runtime", 0o700)
        let address = "unix:path=\(folder)/runtime/bus"
        environment = [
            "DBUS_SESSION_BUS_ADDRESS": address, "XDG_RUNTIME_DIR": "\(folder)/runtime",
            "XDG_DATA_HOME": "\(folder)/data", "XDG_CACHE_HOME": "\(folder)/cache",
            "XDG_CONFIG_HOME": "\(folder)/config",
        ]
        bus.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        bus.arguments = ["--session", "--nofork", "--nopidfile", "--address=\(address)"]
        bus.standardOutput = FileHandle.nullDevice
        bus.standardError = FileHandle.nullDevice
        try bus.run()
        try Self.wait { FileManager.default.fileExists(atPath: "\(folder)/runtime/bus") }
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        keyring.environment = env
        keyring.executableURL = URL(fileURLWithPath: "/usr/bin/gnome-keyring-daemon")
        keyring.arguments = [
            "--foreground", "--unlock", "--components=secrets", "--control-directory=\(folder)/runtime/keyring",
        ]
        let input = Pipe()
        keyring.standardInput = input
        keyring.standardOutput = FileHandle.nullDevice
        keyring.standardError = FileHandle.nullDevice
        try keyring.run()
        input.fileHandleForWriting.write(Data("member-keyring-\(name)".utf8))
        try? input.fileHandleForWriting.close()
        let environment = self.environment
        try Self.wait {
            let reply = try? CLI.runProgram(
                "dbus-send",
                [
                    "--session", "--dest=org.freedesktop.DBus", "--print-reply", "/org/freedesktop/DBus",
                    "org.freedesktop.DBus.NameHasOwner", "string:org.freedesktop.secrets",
                ],
                environment: environment
            )
            return reply?.stdout.contains("boolean true") ?? false
        }
    }

    static func wait(_ condition: () -> Bool) throws {
        guard !waitUntil(condition) else { return }
        throw CLIError(message: "a member's Secret Service did not start")
    }

    deinit {
        // SIGKILL: the test runner's blocked signals are inherited, so SIGTERM would wait forever.
        for process in [keyring, bus] where process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}

/// Debian's sshd on a free loopback port, with its own host key and one authorized client key,
/// serving the bare repositories under `folder` to git over ssh.
final class LoopbackSSH: @unchecked Sendable {
    let pid: pid_t
    let port: Int
    let user: String
    /// GIT_SSH_COMMAND for git: the test's key and known_hosts, nothing of the machine's.
    let gitSSHCommand: String

    init(_ parent: TemporaryFolder) throws {
        let folder = parent.path("ssh")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for key in ["host", "client"] {
            let made = try CLI.runProgram("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", "\(folder)/\(key)"])
            guard made.status == 0 else { throw CLIError(message: "ssh-keygen: \(made.stderr)") }
        }
        try FileManager.default.copyItem(atPath: "\(folder)/client.pub", toPath: "\(folder)/authorized_keys")
        // sshd wants its privilege-separation folder.
        try? FileManager.default.createDirectory(atPath: "/run/sshd", withIntermediateDirectories: true)
        port = try unusedLoopbackPort()
        user = try CLI.runProgram("id", ["-un"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let config = """
            Port \(port)
            ListenAddress 127.0.0.1
            HostKey \(folder)/host
            AuthorizedKeysFile \(folder)/authorized_keys
            PidFile none
            StrictModes no
            UsePAM no
            PasswordAuthentication no
            KbdInteractiveAuthentication no
            PermitRootLogin prohibit-password
            """
        try config.write(toFile: "\(folder)/sshd_config", atomically: true, encoding: .utf8)
        let hostKey = try String(contentsOfFile: "\(folder)/host.pub", encoding: .utf8)
            .split(separator: " ").prefix(2).joined(separator: " ")
        try "[127.0.0.1]:\(port) \(hostKey)\n".write(toFile: "\(folder)/known_hosts", atomically: true, encoding: .utf8)
        gitSSHCommand =
            "ssh -i \(folder)/client -o IdentitiesOnly=yes -o UserKnownHostsFile=\(folder)/known_hosts "
            + "-o StrictHostKeyChecking=yes -o BatchMode=yes"
        // Started through the shell, not Foundation's Process: sshd closes every descriptor it
        // inherits, which Foundation takes for the child's exit and then waits on it forever.
        let started = try CLI.runProgram(
            "sh",
            ["-c", "/usr/sbin/sshd -D -e -f \(folder)/sshd_config </dev/null >/dev/null 2>&1 & echo $!"]
        )
        guard let pid = pid_t(started.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw CLIError(message: "sshd did not start: \(started.stderr)")
        }
        self.pid = pid
        let command = gitSSHCommand
        let (port, user) = (port, user)
        try MemberKeyring.wait {
            let probe = try? CLI.runProgram(
                "sh",
                ["-c", "\(command) -p \(port) \(user)@127.0.0.1 true"]
            )
            return probe?.status == 0
        }
    }

    func url(_ repository: String) -> String { "ssh://\(user)@127.0.0.1:\(port)\(repository)" }

    deinit { kill(pid, SIGKILL) }
}

import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What stands in the way of the Secret Service, each on a real session bus of its own and each
/// told apart by libsecret's error codes, with its own message: nothing provides the service,
/// the keyring is locked, the service never answers.
struct SecretServiceFailureTests {
    /// A private session bus (dbus-daemon) whose only service, when `activating` is given, is
    /// org.freedesktop.secrets started by that command (the bus waits for it to take the name).
    final class PrivateBus: @unchecked Sendable {
        let folder: TemporaryFolder
        let process = Process()
        var address: String { "unix:path=\(folder.path("bus"))" }

        init(activating command: String? = nil) throws {
            folder = try TemporaryFolder()
            let services = folder.path("services")
            try FileManager.default.createDirectory(atPath: services, withIntermediateDirectories: true)
            if let command {
                try "[D-BUS Service]\nName=org.freedesktop.secrets\nExec=\(command)\n".write(
                    toFile: "\(services)/org.freedesktop.secrets.service",
                    atomically: true,
                    encoding: .utf8
                )
            }
            try """
            <busconfig>
              <type>session</type>
              <listen>unix:path=\(folder.path("bus"))</listen>
              <auth>EXTERNAL</auth>
              <servicedir>\(services)</servicedir>
              <limit name="service_start_timeout">600000</limit>
              <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
            </busconfig>
            """.write(toFile: folder.path("bus.conf"), atomically: true, encoding: .utf8)
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["dbus-daemon", "--config-file=\(folder.path("bus.conf"))", "--nofork", "--nopidfile"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
        }

        func started() async throws -> Bool {
            try await eventually { FileManager.default.fileExists(atPath: folder.path("bus")) }
        }

        deinit {
            // The activated command is the bus's child; it goes when the bus goes.
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    static func importKey(store: String, environment: [String: String]) throws -> CLI.Result {
        try CLI.run(
            [
                "import", CLI.cert("keys/AuthKey_ABC123DEFG.p8"), "--team-id", "ABCDE12345", "--topic",
                "com.example.app", "--store", store,
            ],
            environment: environment,
            timeout: 60
        )
    }

    @Test func nothingProvidesTheService() async throws {
        let bus = try PrivateBus()
        #expect(try await bus.started())
        let store = try TemporaryFolder()
        try Self.importKey(
            store: store.path("store"),
            environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address]
        ).exited(2, stderr: "no program provides the Secret Service", "gnome-keyring-daemon --start")
        #expect(!FileManager.default.fileExists(atPath: store.path("store/index.json")))
    }

    /// The bus starts the service's program, which never takes the name: every call waits, and
    /// the command's own deadline (10 s) ends the wait with a message that says so.
    @Test func aServiceThatNeverAnswersIsADeadline() async throws {
        let bus = try PrivateBus(activating: "/bin/sleep 30")
        #expect(try await bus.started())
        let store = try TemporaryFolder()
        let result = try Self.importKey(
            store: store.path("store"),
            environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address]
        ).exited(2, stderr: "did not answer within 10 s")
        #expect(!result.stderr.contains("no program provides"), "\(result.stderr)")
    }

    /// A keyring locked after a key was stored: a write, a check of the store and a check of
    /// the one credential each say it is locked, and nothing prompts.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/usr/bin/gnome-keyring-daemon")))
    func aLockedKeyringIsSaidAsSuch() throws {
        let folder = try TemporaryFolder()
        let keyring = try MemberKeyring(folder, name: "locked")
        let store = folder.path("store")
        try Self.importKey(store: store, environment: keyring.environment).succeeded()
        try CLI.runProgram(
            "dbus-send",
            [
                "--session", "--dest=org.freedesktop.secrets", "--print-reply", "/org/freedesktop/secrets",
                "org.freedesktop.Secret.Service.Lock", "array:objpath:/org/freedesktop/secrets/collection/login",
            ],
            environment: keyring.environment
        ).succeeded()

        try Self.importKey(store: folder.path("other"), environment: keyring.environment)
            .exited(2, stderr: "is locked, and apnsctl does not wait on an unlock prompt")

        let whole = try CLI.run(["check", "--store", store], environment: keyring.environment, timeout: 60).exited(2)
        #expect((whole.stdout + whole.stderr).contains("locked"), "\(whole.stdout)\(whole.stderr)")

        let one = try CLI.run(
            ["check", "token-ABC123DEFG", "--store", store],
            environment: keyring.environment,
            timeout: 60
        ).exited(2)
        #expect(
            (one.stdout + one.stderr).contains("locked collection (keyring), and apnsctl does not wait"),
            "\(one.stdout)\(one.stderr)"
        )
    }
}

import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The Examples package's programs, built on the libraries alone as a Swift server would use
/// them, against `apnsctl gateway serve`, with a credential imported into a throw-away store
/// (its key in the private Secret Service).
@Suite(.serialized)
struct ExamplesTests {
    static let alias = "example-app"

    /// Builds Examples/ (nothing to do when CI built it before the tests) and gives the folder
    /// of its programs.
    static let programs: Result<String, any Error> = Result {
        let build = ["build", "--package-path", CLI.packageRoot.appendingPathComponent("Examples").path]
        let built = try CLI.runProgram("swift", build, timeout: 3_600)
        guard built.status == 0 else {
            throw CLIError(message: "the Examples package did not build:\n\(built.stdout)\(built.stderr)")
        }
        let folder = try CLI.runProgram("swift", build + ["--show-bin-path"])
        return folder.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A new store holding the minted sandbox identity as ``alias``.
    static func store(_ pki: TestPKI.Identities, in folder: TemporaryFolder) throws -> [String: String] {
        let store = folder.path("store")
        let imported = try pki.run(["import", pki.identity("sandbox"), "--alias", alias, "--store", store])
        guard imported.status == 0 else { throw CLIError(message: "import failed: \(imported.stderr)") }
        return ["APNSCTL_STORE": store]
    }

    @Test func sendOneSendsWithAStoredCredentialAndPrintsTheAnswer() throws {
        let programs = try Self.programs.get()
        let pki = try BulkSendTests.pki.get()
        let folder = try TemporaryFolder()
        let environment = try Self.store(pki, in: folder)
        let unregistered = String(repeating: "ef", count: 32)
        let devices = folder.path("devices.json")
        try """
        {"\(GatewayCommandTests.token)": {"topic": "com.example.app", "environment": "sandbox"},
         "\(unregistered)": {"topic": "com.example.app", "environment": "sandbox", "unregistered_at": 1700000000000}}
        """.write(toFile: devices, atomically: true, encoding: .utf8)
        let gateway = try pki.gateway("sandbox", ["--devices", devices])

        let sent = try CLI.runProgram(
            programs + "/SendOne",
            [Self.alias, GatewayCommandTests.token, gateway.address, gateway.caFile],
            environment: environment
        )
        #expect(sent.status == 0, "exit \(sent.status): \(sent.stdout)\(sent.stderr)")
        #expect(sent.stdout.hasPrefix("accepted: 200 apns-id "), "\(sent.stdout)")
        let delivered = try gateway.deliveries()
        #expect(delivered.count == 1)
        #expect(delivered.first?["device_token"] as? String == GatewayCommandTests.token)

        // A device that is gone: APNs' answer, explained, and exit 1.
        let rejected = try CLI.runProgram(
            programs + "/SendOne",
            [Self.alias, unregistered, gateway.address, gateway.caFile],
            environment: environment
        )
        #expect(rejected.status == 1, "exit \(rejected.status): \(rejected.stdout)\(rejected.stderr)")
        #expect(rejected.stdout.hasPrefix("rejected: 410 Unregistered"), "\(rejected.stdout)")
        #expect(try gateway.deliveries().count == 1)
    }

    @Test func appPreflightJudgesAnAppFromTheStoreInItsOwnWords() throws {
        let programs = try Self.programs.get()
        let pki = try BulkSendTests.pki.get()
        let folder = try TemporaryFolder()
        let environment = try Self.store(pki, in: folder)
        let gateway = try pki.gateway("sandbox", [])
        let connection = [gateway.address, gateway.caFile]

        // The stored sandbox identity is fit for sandbox: ready, in the program's words, exit 0.
        let ready = try CLI.runProgram(
            programs + "/AppPreflight",
            ["com.example.app", "sandbox"] + connection,
            environment: environment
        )
        #expect(ready.status == 0, "exit \(ready.status): \(ready.stdout)\(ready.stderr)")
        #expect(ready.stdout.contains("  \(Self.alias): fit"), "\(ready.stdout)")
        #expect(ready.stdout.contains("com.example.app can be pushed to in sandbox with \(Self.alias)."))

        // Production: the store holds nothing for it, so the app is not ready (exit 1), and
        // an app the store does not know is not ready either; neither reaches the gateway.
        for (app, env) in [("com.example.app", "production"), ("com.example.other", "sandbox")] {
            let notReady = try CLI.runProgram(
                programs + "/AppPreflight",
                [app, env] + connection,
                environment: environment
            )
            #expect(
                notReady.status == 1,
                "\(app) \(env): exit \(notReady.status): \(notReady.stdout)\(notReady.stderr)"
            )
            #expect(notReady.stdout.contains("\(app) cannot be pushed to in \(env)"), "\(notReady.stdout)")
        }
        // Only the ready app's credential was tried against the gateway (one made-up-token probe).
        #expect(try gateway.deliveries().count == 1)
    }

    @Test func bulkSendWritesAResultPerTokenAndResumesAfterAStop() throws {
        let programs = try Self.programs.get()
        let folder = try TemporaryFolder()
        let (pki, gateway, _) = try BulkSendTests().gateway([])
        let environment = try Self.store(pki, in: folder)
        let (_, lines, tokenFile) = try BulkSendTests.makeTokens(20_000, seed: 61, in: folder)
        let resultsFile = folder.path("results.jsonl")
        let arguments = [Self.alias, tokenFile, resultsFile, gateway.address, gateway.caFile]

        // The first run is stopped with SIGTERM once results are being written.
        let first = Process()
        first.executableURL = URL(fileURLWithPath: programs + "/BulkSend")
        first.arguments = arguments
        first.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        first.standardOutput = FileHandle.nullDevice
        first.standardError = FileHandle.nullDevice
        try first.run()
        waitUntil {
            let written = (try? String(contentsOfFile: resultsFile, encoding: .utf8))?.split(separator: "\n").count ?? 0
            return written >= 1_000 || !first.isRunning
        }
        let stoppedWhileRunning = first.isRunning
        kill(first.processIdentifier, SIGTERM)
        first.waitUntilExit()
        try #require(stoppedWhileRunning, "the run ended before it could be stopped; give it more tokens")
        #expect(first.terminationStatus == 2, "a stopped run exits 2")
        let partial = try BulkStopAndResumeTests.results(resultsFile)
        #expect(partial.count < lines.count, "the stop came before the end")
        #expect(try String(contentsOfFile: resultsFile, encoding: .utf8).contains(#"{"stop":"#), "the stop is recorded")

        // The same arguments again resume the run and complete its results.
        let resumed = try CLI.runProgram(programs + "/BulkSend", arguments, environment: environment, timeout: 600)
        #expect(resumed.status == 0, "exit \(resumed.status): \(resumed.stdout)\(resumed.stderr)")
        let results = try BulkStopAndResumeTests.results(resultsFile)
        BulkSendTests.expectOneResultPerLine(results, lines: lines)
        try BulkStopAndResumeTests.expectNothingDeliveredTwice(gateway)
        let accepted = results.filter { $0["status"] as? Int == 200 }.count
        #expect(accepted == lines.count, "every token was accepted once")
        #expect(try gateway.deliveries().count == accepted, "the gateway recorded every accepted notification")
        #expect(!FileManager.default.fileExists(atPath: resultsFile + ".journal"), "a complete run keeps no journal")
    }
}

import Foundation
import TestSupport
import Testing

/// `remove`, rotation and `request` killed at each step that changes something (every rename,
/// unlink, fsync and D-Bus message, by strace's fault injection): after the next command, the
/// store holds the state before or the state after, and `list` and `check` find it clean.
@Suite(.needsSecretService)
struct StoreInterruptionTests {
    typealias Store = StoreCommandTests.Store

    static let steps = ["rename", "unlink", "unlinkat", "fsync", "sendmsg"]

    /// Runs apnsctl with `arguments` under strace, killed at the `call`th `syscall`. Returns
    /// whether it was killed; a run that was not must have succeeded.
    static func killed(_ arguments: [String], at syscall: String, call: Int) throws -> Bool {
        let result = try CLI.runProgram(
            "strace",
            [
                "-f", "-qq", "-o", "/dev/null", "-e", "trace=\(syscall)", "-e",
                "inject=\(syscall):signal=KILL:when=\(call)",
            ]
                + [CLI.binary] + arguments
        )
        if result.status == 9 || result.status == 137 { return true }
        #expect(result.status == 0, "\(arguments) not killed at \(syscall) #\(call): \(result.stderr)")
        return false
    }

    /// The index's entries, and what the folder, the Secret Service, `list` and `check` say of
    /// the store: nothing left over, nothing unaccounted, nothing orphaned.
    static func expectClean(_ store: Store, entries: Int, _ context: String = "") throws {
        let listed = try store.run(["list", "--json"]).succeeded(context: "\(context)")
        let report = try listed.json()
        #expect((report["unaccounted_files"] as? [Any])?.isEmpty != false, "\(context): \(listed.stdout)")
        try store.run(["check"]).succeeded(context: "\(context)")
        let index = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: store.path + "/index.json")))
                as? [String: Any]
        )
        let credentials = index["credentials"] as? [[String: Any]] ?? []
        let requests = index["requests"] as? [[String: Any]] ?? []
        #expect(credentials.count + requests.count == entries, "\(context)")
        let named = Set(
            credentials.flatMap { [$0["certificate_file"], $0["bundle_file"]].compactMap { $0 as? String } }.map {
                ($0 as NSString).lastPathComponent
            }
        )
        let files = Set(try FileManager.default.contentsOfDirectory(atPath: store.path + "/credentials"))
        #expect(files == named, "\(context)")
        let root = Set(try FileManager.default.contentsOfDirectory(atPath: store.path))
        #expect(root == [".lock", "credentials", "index.json"], "\(context)")
        let items = try StoreCommandTests.secretTool(["search", "--all", "application", "apnsctl", "store", store.path])
        let count = (items.stdout + items.stderr).components(separatedBy: "attribute.alias = ").count - 1
        #expect(count == entries, "\(context): \(items.stdout)\(items.stderr)")
    }

    /// The alias's certificate SHA-256, or nil when the store has no such entry.
    static func sha(_ store: Store, _ alias: String) throws -> String? {
        try store.listJSON().first { $0["credential"] as? String == alias }?["sha256"] as? String
    }

    @Test func removeKilledAtEachStep() throws {
        let store = try Store()
        let pki = try TemporaryFolder()
        try StoreConcurrencyTests.severalApps(store, pki: pki)
        let alias = "com.example.victim-universal"
        let file = try TestPKI.mint(in: pki, name: "victim", bundle: "com.example.victim", days: 200)
        #expect(try store.run(["import", file]).status == 0)
        let original = try Self.sha(store, alias)
        var kills = 0
        for step in Self.steps {
            for call in 1...400 {
                let wasKilled = try Self.killed(["remove", alias, "--store", store.path], at: step, call: call)
                // The next command settles what the killed one left.
                let now = try Self.sha(store, alias)
                #expect(now == nil || now == original, "\(step) #\(call)")
                try Self.expectClean(store, entries: now == nil ? 4 : 5, "remove killed at \(step) #\(call)")
                if now == nil { #expect(try store.run(["import", file]).status == 0) }
                if !wasKilled { break }
                kills += 1
            }
        }
        #expect(kills > 10)
    }

    @Test func rotationKilledAtEachStep() throws {
        let store = try Store()
        let pki = try TemporaryFolder()
        try StoreConcurrencyTests.severalApps(store, pki: pki)
        let alias = "com.example.alpha-universal"
        let old = try TestPKI.mint(in: pki, name: "alpha-old", bundle: "com.example.alpha", days: 150)
        let new = try TestPKI.mint(in: pki, name: "alpha-new", bundle: "com.example.alpha", days: 400)
        // The store's alpha certificate is replaced by `old`, so that it can be put back the same way.
        #expect(try store.run(["import", old, "--replace", alias, "--force"]).status == 0)
        let before = try Self.sha(store, alias)
        var kills = 0
        for step in Self.steps {
            for call in 1...400 {
                let wasKilled = try Self.killed(
                    ["import", new, "--replace", alias, "--store", store.path],
                    at: step,
                    call: call
                )
                let now = try #require(try Self.sha(store, alias), "\(step) #\(call): the alias is gone")
                try Self.expectClean(store, entries: 4, "rotation killed at \(step) #\(call)")
                if now != before {
                    #expect(try store.run(["import", old, "--replace", alias, "--force"]).status == 0)
                }
                if !wasKilled { break }
                kills += 1
            }
        }
        #expect(kills > 10)
    }

    @Test func requestKilledAtEachStepLeavesARequestOrNothing() throws {
        let store = try Store()
        let pki = try TemporaryFolder()
        try StoreConcurrencyTests.severalApps(store, pki: pki)
        let outside = try TemporaryFolder()
        let csr = outside.path("push.csr")
        var kills = 0
        for step in Self.steps {
            for call in 1...400 {
                let wasKilled = try Self.killed(["request", "--out", csr, "--store", store.path], at: step, call: call)
                let json = try store.run(["list", "--json"]).json()
                let pending = json["pending_requests"] as? [[String: Any]] ?? []
                let left = try FileManager.default.contentsOfDirectory(atPath: outside.url.path)
                if pending.isEmpty {
                    #expect(left.isEmpty, "request killed at \(step) #\(call) left \(left)")
                    try Self.expectClean(store, entries: 4, "request killed at \(step) #\(call)")
                } else {
                    #expect(pending.count == 1)
                    #expect(left == ["push.csr"], "request killed at \(step) #\(call) left \(left)")
                    try Self.expectClean(store, entries: 5, "request killed at \(step) #\(call)")
                    // The CSR is the pending request's: its certificate imports with the key.
                    if !wasKilled || call % 5 == 1 {
                        let certificate = try TestPKI.issue(
                            csr: csr,
                            bundle: "com.example.req",
                            in: pki,
                            name: "aps-\(call)"
                        )
                        try store.run(["import", certificate]).succeeded()
                        #expect(try store.run(["remove", "com.example.req-universal"]).status == 0)
                    } else {
                        let name = try #require(pending.first?["credential"] as? String)
                        #expect(try store.run(["remove", name]).status == 0)
                    }
                    try FileManager.default.removeItem(atPath: csr)
                }
                if !wasKilled { break }
                kills += 1
            }
        }
        #expect(kills > 10)
    }
}

import Foundation
import TestSupport
import Testing

/// `check --format junit` and `preflight --format junit`, read as CI reads them: validated by
/// xmllint (libxml2) against Tests/Schemas/junit.xsd, and read by two JUnit readers no one here
/// wrote (junitparser and xunitparser, through scripts/read-junit), whose counts must be those
/// of the JSON report of the same store.
@Suite(.needsPrivateSecretService)
struct JUnitReportTests {
    typealias Store = StoreCommandTests.Store

    /// What one reader made of a report.
    struct Read {
        var tests: Int
        var failures: Int
        var errors: Int
        var skipped: Int
        var cases: [[String: Any]]

        func results(_ result: String) -> [[String: Any]] { cases.filter { $0["result"] as? String == result } }
        func named(_ name: String) -> [String: Any]? { cases.first { $0["name"] as? String == name } }
    }

    /// Validates `file` against the JUnit schema, then reads it with both readers; each reader's
    /// counts are those of its test cases.
    static func read(_ file: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Read] {
        let schema = CLI.packageRoot.appendingPathComponent("Tests/Schemas/junit.xsd").path
        let valid = try CLI.runProgram("xmllint", ["--noout", "--schema", schema, file])
        #expect(valid.status == 0, "not valid JUnit: \(valid.stderr)", sourceLocation: sourceLocation)
        let python = CLI.packageRoot.appendingPathComponent(".venv/bin/python").path
        let script = CLI.packageRoot.appendingPathComponent("scripts/read-junit").path
        let result = try CLI.runProgram(python, [script, file])
        #expect(result.status == 0, "\(result.stderr)", sourceLocation: sourceLocation)
        let json = try result.json(sourceLocation: sourceLocation)
        var reads: [String: Read] = [:]
        for reader in ["junitparser", "xunitparser"] {
            let read = try #require(json[reader] as? [String: Any], sourceLocation: sourceLocation)
            let cases = try #require(read["cases"] as? [[String: Any]], sourceLocation: sourceLocation)
            let counted = Read(
                tests: read["tests"] as? Int ?? -1,
                failures: read["failures"] as? Int ?? -1,
                errors: read["errors"] as? Int ?? -1,
                skipped: read["skipped"] as? Int ?? -1,
                cases: cases
            )
            #expect(counted.tests == cases.count, "\(reader): \(read)", sourceLocation: sourceLocation)
            #expect(counted.failures == counted.results("failure").count, "\(reader)", sourceLocation: sourceLocation)
            #expect(counted.errors == counted.results("error").count, "\(reader)", sourceLocation: sourceLocation)
            #expect(counted.skipped == counted.results("skipped").count, "\(reader)", sourceLocation: sourceLocation)
            reads[reader] = counted
        }
        return reads
    }

    /// A store of five credentials, checked for production: com.example.app expiring in 6 days
    /// (a warning, which fails the check), com.example.fine, com.example.dev for the sandbox only
    /// (a development app: sandbox only, skipped; its certificate, judged for production, is an
    /// environment mismatch, as `check` says in every format), com.example.both with a
    /// production and a sandbox certificate (the sandbox one skipped: not for production).
    static func mixedStore() throws -> (Store, TemporaryFolder) {
        let store = try Store()
        let pki = try TemporaryFolder()
        let minted: [(String, String, Int, TestPKI.Environments)] = [
            ("app", "com.example.app", 6, [.sandbox, .production]),
            ("fine", "com.example.fine", 200, [.production]),
            ("dev", "com.example.dev", 200, [.sandbox]),
            ("both-production", "com.example.both", 200, [.production]),
            ("both-sandbox", "com.example.both", 200, [.sandbox]),
        ]
        for (name, bundle, days, environments) in minted {
            let file = try TestPKI.mint(in: pki, name: name, bundle: bundle, days: days, environments: environments)
            try store.run(["import", file]).succeeded()
        }
        return (store, pki)
    }

    @Test func checkReportCountsWhatTheJSONReportSays() throws {
        let (store, pki) = try Self.mixedStore()
        let file = store.folder.path("check.xml")
        let junit = try store.run(["check", "--environment", "production", "--format", "junit", "--output", file])
        let json = try store.run(["check", "--environment", "production", "--format", "json"])
        // Exit statuses as for the other formats: the expiring certificate is a finding.
        #expect(junit.status == 1 && json.status == 1, "\(junit.stderr)\(json.stdout)")
        #expect(junit.stdout.isEmpty, "the report went to the file: \(junit.stdout)")

        // Expected from the JSON report: a test case per app and per credential skipped; an app
        // fails when a credential of it has a finding (--fail-on warning, the default), is
        // skipped when sandbox only.
        let report = try json.json()
        let apps = try #require(report["apps"] as? [[String: Any]])
        let skippedCredentials = try #require(report["skipped"] as? [[String: Any]])
        let credentials = try #require(report["credentials"] as? [[String: Any]])
        let findings = Dictionary(
            uniqueKeysWithValues: credentials.map {
                ($0["credential"] as? String ?? "", ($0["findings"] as? [[String: Any]] ?? []).count)
            }
        )
        let sandboxOnly = apps.filter { $0["state"] as? String == "sandbox_only" }
        let failing = apps.filter { app in
            guard app["state"] as? String != "sandbox_only" else { return false }
            let names = (app["fit"] as? [String] ?? []) + (app["unfit"] as? [String] ?? [])
            return app["state"] as? String == "not_ready" || names.contains { findings[$0, default: 0] > 0 }
        }
        // A credential judged outside every app's verdict (the development app's sandbox
        // certificate, judged for production and found for the sandbox only) is a case of its own.
        var claimed = Set(skippedCredentials.compactMap { $0["credential"] as? String })
        for app in apps {
            for list in ["fit", "unfit", "could_not_check"] { claimed.formUnion(app[list] as? [String] ?? []) }
            let superseded = (app["skipped"] as? [[String: Any]] ?? []).filter {
                $0["reason"] as? String == "superseded"
            }
            claimed.formUnion(superseded.compactMap { $0["credential"] as? String })
        }
        let alone = findings.filter { !claimed.contains($0.key) }
        #expect(apps.count == 4 && skippedCredentials.count == 1 && failing.count == 1, "\(report)")
        #expect(alone.map(\.key) == ["com.example.dev-sandbox"], "\(report)")

        for (reader, read) in try Self.read(file) {
            #expect(read.tests == apps.count + skippedCredentials.count + alone.count, "\(reader)")
            #expect(read.failures == failing.count + alone.filter { $0.value > 0 }.count, "\(reader)")
            #expect(read.named("com.example.dev-sandbox (production)")?["type"] as? String == "environment_mismatch")
            #expect(read.errors == 0, "\(reader)")
            #expect(read.skipped == sandboxOnly.count + skippedCredentials.count, "\(reader)")
            // The expiring certificate: a failure naming the app, typed by the finding's code.
            let expiring = try #require(read.named("com.example.app (production)"), "\(reader): \(read.cases)")
            #expect(expiring["result"] as? String == "failure", "\(reader): \(expiring)")
            #expect(expiring["type"] as? String == "expiring", "\(reader): \(expiring)")
            #expect((expiring["message"] as? String)?.contains("com.example.app") == true, "\(expiring)")
            #expect(read.named("com.example.fine (production)")?["result"] as? String == "passed", "\(reader)")
            #expect(read.named("com.example.dev (production)")?["result"] as? String == "skipped", "\(reader)")
            #expect(read.named("com.example.both (production)")?["result"] as? String == "passed", "\(reader)")
        }
        // The failure's text gives the fix, and the suite says when and where it ran.
        let junitparser = try #require(try Self.read(file)["junitparser"])
        let text = junitparser.named("com.example.app (production)")?["text"] as? String ?? ""
        #expect(text.contains("Expires in") && text.contains("fix: "), "\(text)")
        let xml = try String(contentsOfFile: file, encoding: .utf8)
        #expect(xml.contains("hostname=\"") && xml.contains("timestamp=\""), "\(xml)")
        #expect(!xml.contains("PRIVATE KEY"), "\(xml)")

        // --fail-on never: findings no longer fail the check, nor its report.
        let never = store.folder.path("never.xml")
        try store.run([
            "check", "--environment", "production", "--format", "junit", "--output", never, "--fail-on", "never",
        ])
        .succeeded()
        for (reader, read) in try Self.read(never) { #expect(read.failures == 0, "\(reader): \(read.cases)") }

        // A file named, with no environment asked: a test case of its own, named by it.
        let named = store.folder.path("named.xml")
        let bundle = pki.path("app-bundle.pem")
        try store.run(["check", bundle, "--format", "junit", "--output", named]).exited(1)
        for (reader, read) in try Self.read(named) {
            #expect(read.tests == 1 && read.failures == 1, "\(reader): \(read.cases)")
            #expect(read.cases.first?["name"] as? String == "\(bundle) (any environment)", "\(read.cases)")
            #expect(read.cases.first?["type"] as? String == "expiring", "\(read.cases)")
        }
    }

    @Test func perAppCheckReportFollowsTheVerdicts() throws {
        let (store, _) = try Self.mixedStore()
        let file = store.folder.path("apps.xml")
        let arguments = [
            "check", "--topic", "com.example.app", "--topic", "com.example.dev", "--environment", "production",
        ]
        let junit = try store.run(arguments + ["--format", "junit", "--output", file])
        let json = try store.run(arguments + ["--format", "json"])
        #expect(junit.status == 1 && json.status == 1, "\(junit.stderr)\(json.stdout)")
        let apps = try #require(try json.json()["apps"] as? [[String: Any]])
        let states = apps.map { $0["state"] as? String ?? "" }
        #expect(states == ["ready", "not_ready"], "\(apps)")
        for (reader, read) in try Self.read(file) {
            #expect(read.tests == apps.count, "\(reader)")
            #expect(read.failures == states.filter { $0 == "not_ready" }.count, "\(reader)")
            #expect(read.errors == states.filter { $0 == "could_not_check" }.count, "\(reader)")
            #expect(read.skipped == states.filter { $0 == "sandbox_only" }.count, "\(reader)")
            // With --topic one fit credential makes the app ready: its expiry is told, not failed.
            #expect(read.named("com.example.app (production)")?["result"] as? String == "passed", "\(reader)")
            let dev = try #require(read.named("com.example.dev (production)"), "\(reader): \(read.cases)")
            #expect(dev["result"] as? String == "failure" && dev["type"] as? String == "not_ready", "\(dev)")
            #expect((dev["message"] as? String)?.contains("com.example.dev") == true, "\(dev)")
        }
    }

    @Test func checkThatCannotRunStillWritesAReport() throws {
        let store = try Store()
        let file = store.folder.path("empty.xml")
        try store.run(["check", "--format", "junit", "--output", file]).exited(2, stderr: "empty")
        for (reader, read) in try Self.read(file) {
            #expect(read.tests == 1 && read.errors == 1, "\(reader): \(read.cases)")
            #expect((read.cases.first?["message"] as? String)?.contains("empty") == true, "\(reader): \(read.cases)")
        }
        // preflight too: the empty store is one test case in error, and the exit status is 2.
        let preflight = store.folder.path("preflight.xml")
        try store.run(["preflight", "--environment", "production", "--format", "junit", "--output", preflight])
            .exited(2, stderr: "empty")
        for (reader, read) in try Self.read(preflight) {
            #expect(read.errors == 1 && read.tests == read.errors + read.failures, "\(reader): \(read.cases)")
            #expect(read.cases.contains { ($0["message"] as? String)?.contains("empty") == true }, "\(read.cases)")
        }
    }

    @Test func preflightReportCountsWhatTheJSONReportSays() throws {
        let pki = try TestPKI.Identities()
        let gateway = try pki.gateway("production")
        let store = try Store()
        try store.run(
            ["import", pki.identity("universal"), "--password-env", "MINT"],
            environment: ["MINT": TestPKI.Identities.password]
        ).succeeded()
        let other = try TemporaryFolder()
        let dev = try TestPKI.mint(
            in: other,
            name: "dev",
            bundle: "com.example.dev",
            days: 200,
            environments: [.sandbox]
        )
        try store.run(["import", dev]).succeeded()

        // Every app of the store: com.example.app ready, com.example.dev sandbox only (skipped).
        let file = store.folder.path("preflight.xml")
        let base = ["preflight", "--environment", "production"] + gateway.connection
        try store.run(base + ["--format", "junit", "--output", file]).succeeded()
        let json = try store.run(base + ["--json"]).succeeded().json()
        let apps = try #require(json["apps"] as? [[String: Any]])
        let states = apps.map { $0["state"] as? String ?? "" }
        #expect(states.sorted() == ["ready", "sandbox_only"], "\(apps)")
        for (reader, read) in try Self.read(file) {
            #expect(read.tests == apps.count, "\(reader)")
            #expect(read.failures == states.filter { $0 == "not_ready" }.count, "\(reader)")
            #expect(read.errors == states.filter { $0 == "could_not_check" }.count, "\(reader)")
            #expect(read.skipped == states.filter { $0 == "sandbox_only" }.count, "\(reader)")
            #expect(read.named("com.example.app (production)")?["result"] as? String == "passed", "\(reader)")
            #expect(read.named("com.example.dev (production)")?["result"] as? String == "skipped", "\(reader)")
        }

        // Credentials named: the sandbox identity is not ready for production, a failure with
        // why; the universal one passes. The report goes to standard output without --output.
        let named = try pki.run(
            ["preflight", pki.identity("sandbox"), pki.identity("universal"), "--environment", "production"]
                + gateway.connection + ["--format", "junit"]
        )
        #expect(named.status == 1, "\(named.stdout)\(named.stderr)")
        let namedFile = store.folder.path("named.xml")
        try named.stdout.write(toFile: namedFile, atomically: true, encoding: .utf8)
        let namedJSON = try pki.run(
            ["preflight", pki.identity("sandbox"), pki.identity("universal"), "--environment", "production", "--json"]
                + gateway.connection
        ).json()
        let entries = try #require(namedJSON["credentials"] as? [[String: Any]])
        for (reader, read) in try Self.read(namedFile) {
            #expect(read.tests == entries.count, "\(reader)")
            #expect(read.failures == entries.filter { $0["ready"] as? Bool == false }.count, "\(reader)")
            let failure = try #require(read.results("failure").first, "\(reader): \(read.cases)")
            #expect((failure["name"] as? String)?.hasSuffix("sandbox.p12 (production)") == true, "\(failure)")
            #expect((failure["message"] as? String)?.contains("sandbox") == true, "\(failure)")
        }
        // A gateway that cannot be reached: not known, an error typed by the connection's code,
        // and the exit status 2 of every other format.
        let unreachable = store.folder.path("unreachable.xml")
        let refused = try pki.run(
            ["preflight", pki.identity("universal"), "--environment", "production", "--gateway", "127.0.0.1:1"]
                + ["--ca", gateway.caFile, "--format", "junit", "--output", unreachable]
        )
        #expect(refused.status == 2, "\(refused.stdout)\(refused.stderr)")
        let refusedJSON = try pki.run(
            ["preflight", pki.identity("universal"), "--environment", "production", "--gateway", "127.0.0.1:1"]
                + ["--ca", gateway.caFile, "--json"]
        ).json()
        let refusedEntry = try #require((refusedJSON["credentials"] as? [[String: Any]])?.first)
        let refusedCode = (refusedEntry["error"] as? [String: Any])?["code"] as? String
        for (reader, read) in try Self.read(unreachable) {
            #expect(read.tests == 1 && read.errors == 1, "\(reader): \(read.cases)")
            #expect(refusedCode != nil && read.cases.first?["type"] as? String == refusedCode, "\(read.cases)")
        }

        for xml in [try String(contentsOfFile: file, encoding: .utf8), named.stdout] {
            #expect(!xml.contains(TestPKI.Identities.password) && !xml.contains("PRIVATE KEY"), "\(xml)")
            // No device token (the auth check's made-up one included): no run of 64 hex digits.
            #expect(xml.firstMatch(of: /[0-9a-fA-F]{64}/) == nil, "\(xml)")
        }

        // --output is for a report: with the text, which shows progress as it goes, it is refused.
        try store.run(base + ["--output", file]).exited(64, stderr: "--format junit")
    }
}

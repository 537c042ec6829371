import CredentialFormats
import Foundation
import TestSupport
import Testing

/// `apnsctl inspect` through the real binary.
struct InspectCommandTests {
    static let password = "apnsctl-test"

    /// `apnsctl inspect --password-stdin` with `arguments`, `password` on standard input.
    static func inspect(
        _ arguments: [String],
        password: String = password,
        environment: [String: String] = [:]
    ) throws -> CLI.Result {
        try CLI.run(["inspect", "--password-stdin"] + arguments, stdin: password + "\n", environment: environment)
    }

    /// Each bad input: exit 2, the file named, a message of its own, a hint, no crash.
    @Test(arguments: [
        ("p12/truncated.p12", true, "cut short"),
        ("p12/unknown-encryption.p12", true, "algorithm OpenSSL does not know"),
        ("pem/key-only.pem", false, "holds no certificate"),
        ("bad/empty.p12", false, "empty (0 bytes)"),
        ("bad/photo.jpg", false, "looks like a JPEG image"),
        ("bad/notes.txt", false, "not a certificate file"),
        ("bad/garbage.pem", false, "damaged"),
        ("no-such-file.p12", false, "No such file"),
        ("p12", false, "folder, not a certificate file"),
    ])
    func badInputHasItsOwnMessage(_ path: String, _ withPassword: Bool, _ phrase: String) throws {
        let result = try CLI.run(
            ["inspect"] + (withPassword ? ["--password-stdin"] : []) + [CLI.cert(path)],
            stdin: withPassword ? Self.password + "\n" : nil
        )
        #expect(result.status == 2)
        #expect(result.stderr.contains(CLI.cert(path)))
        #expect(result.stderr.contains(phrase))
        #expect(result.stderr.contains("hint:"))
        #expect(!result.stderr.contains("Fatal error"))
        #expect(!result.stderr.contains("Stack dump"))
    }

    @Test func wrongPasswordIsNotCorruption() throws {
        let wrong = try Self.inspect([CLI.cert("p12/keychain-legacy.p12")], password: "not-it")
        #expect(wrong.status == 2)
        #expect(wrong.stderr.contains("Wrong password"))
        // "Wrong password or damaged file" is honest about what a MAC can tell; the message of
        // proven damage is another one.
        #expect(!wrong.stderr.contains("The file is damaged"))
        #expect(!wrong.stderr.contains("not-it"))

        for path in ["p12/no-mac.p12", "pem/encrypted-key-bundle.pem", "p12/openssl3-default.p12"] {
            let result = try Self.inspect([CLI.cert(path)], password: "not-it")
            #expect(result.status == 2, "\(path)")
            #expect(result.stderr.contains("Wrong password"), "\(path)")
        }

        let truncated = try Self.inspect([CLI.cert("p12/truncated.p12")])
        #expect(truncated.status == 2)
        #expect(!truncated.stderr.contains("Wrong password"))
        #expect(wrong.stderr != truncated.stderr)
    }

    @Test func passwordNeededButNotGiven() throws {
        // Standard input is a pipe, not a terminal: no prompt, a clear message instead.
        let result = try CLI.run(["inspect", CLI.cert("p12/openssl3-default.p12")])
        #expect(result.status == 2)
        #expect(result.stderr.contains("password-protected"))
        #expect(result.stderr.contains("--password-stdin"))
    }

    @Test func everyPasswordOptionWorks() throws {
        let folder = try TemporaryFolder()
        let passwordFile = folder.path("pass")
        try (Self.password + "\n").write(toFile: passwordFile, atomically: true, encoding: .utf8)
        let path = CLI.cert("p12/keychain-legacy.p12")

        let viaStdin = try Self.inspect([path])
        let viaEnv = try CLI.run(
            ["inspect", "--password-env", "P12_PASSWORD", path],
            environment: ["P12_PASSWORD": Self.password]
        )
        let viaFile = try CLI.run(["inspect", "--password-file", passwordFile, path])
        for result in [viaStdin, viaEnv, viaFile] {
            #expect(result.status == 0, "\(result.arguments): \(result.stderr)")
            #expect(result.stdout.contains("sandbox only"))
            #expect(!result.stdout.contains(Self.password))
            #expect(!result.arguments.contains(Self.password))
        }
        let unset = try CLI.run(["inspect", "--password-env", "APNSCTL_UNSET_VARIABLE", path])
        #expect(unset.status == 2)
        #expect(unset.stderr.contains("APNSCTL_UNSET_VARIABLE"))
    }

    @Test func thereIsNoPasswordValueOption() throws {
        let result = try CLI.run(["inspect", "--password", "x", CLI.cert("p12/keychain-legacy.p12")])
        #expect(result.status == 64)
    }

    /// The headline: a Keychain-style bundle that `openssl pkcs12` (OpenSSL 3, no -legacy) refuses.
    @Test func keychainLegacyBundleWorksWhereOpenSSLFails() throws {
        let path = CLI.cert("p12/keychain-legacy.p12")
        let openssl = try CLI.runProgram(
            "openssl",
            ["pkcs12", "-in", path, "-noout", "-passin", "env:P12PASS"],
            environment: ["P12PASS": Self.password]
        )
        #expect(openssl.status != 0)

        let ours = try CLI.run(["inspect", "--password-env", "P12PASS", path], environment: ["P12PASS": Self.password])
        #expect(ours.status == 0)
        #expect(ours.stdout.contains("RC2-40"))
        #expect(ours.stdout.contains("matches the certificate"))
    }

    @Test func legacyProviderMissingIsExplained() throws {
        let result = try Self.inspect(
            [CLI.cert("p12/keychain-legacy.p12")],
            environment: ["OPENSSL_MODULES": "/nonexistent/ossl-modules"]
        )
        #expect(result.status == 2)
        #expect(result.stderr.contains("legacy provider"))
        #expect(result.stderr.contains("/nonexistent/ossl-modules"))
        #expect(!result.stderr.contains("inner_evp_generic_fetch"))
        // Modern bundles do not need it.
        let modern = try Self.inspect(
            [CLI.cert("p12/openssl3-default.p12")],
            environment: ["OPENSSL_MODULES": "/nonexistent/ossl-modules"]
        )
        #expect(modern.status == 0)
    }

    static func statusAndFindings(_ result: CLI.Result) -> (String?, [String]) {
        guard let json = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
            let file = (json["files"] as? [[String: Any]])?.first
        else { return (nil, ["<unparseable>"]) }
        let status = (file["certificate"] as? [String: Any])?["status"] as? String
        return (status, (file["findings"] as? [[String: Any]] ?? []).compactMap { $0["code"] as? String })
    }

    static var mintedAt: String { ISO8601DateFormatter().string(from: ManifestDates.mintedAt) }

    @Test func problemsExitOne() throws {
        let expired = try Self.inspect(["--json", CLI.cert("p12/expired.p12")])
        #expect(expired.status == 1)
        #expect(Self.statusAndFindings(expired).0 == "expired")
        #expect(Self.statusAndFindings(expired).1 == ["expired"])

        let mismatch = try Self.inspect([CLI.cert("p12/mismatched-key.p12")])
        #expect(mismatch.status == 1)
        #expect(mismatch.stdout.contains("does not belong to this certificate"))

        let fine = try CLI.run(["inspect", CLI.cert("pem/production-cert.pem")])
        #expect(fine.status == 0)

        // A non-push certificate is inspected and flagged, not rejected.
        let other = try CLI.run(["inspect", CLI.cert("identities/other.pem")])
        #expect(other.status == 0)
        #expect(other.stdout.contains("not an Apple push certificate"))
    }

    /// Judged at the moment the fixtures were minted, so the committed certificates do not age out.
    @Test func warnDaysAndAtMoveTheThreshold() throws {
        let path = CLI.cert("identities/expiring.pem")
        let within = try CLI.run(["inspect", "--json", "--at", Self.mintedAt, "--warn-days", "30", path])
        #expect(within.status == 1)
        #expect(Self.statusAndFindings(within).0 == "expiring")
        #expect(Self.statusAndFindings(within).1 == ["expiring"])
        let far = try CLI.run(["inspect", "--json", "--at", Self.mintedAt, "--warn-days", "0", path])
        #expect(far.status == 0)
        #expect(Self.statusAndFindings(far).0 == "valid")
        let later = try CLI.run(["inspect", "--at", "2099-01-01", CLI.cert("identities/production.pem")])
        #expect(later.status == 1)
        #expect(later.stdout.contains("expired"))
        let badDate = try CLI.run(["inspect", "--at", "next tuesday", path])
        #expect(badDate.status == 64)
    }

    @Test func jsonReport() throws {
        let result = try Self.inspect(["--json", CLI.cert("p12/3des-only.p12"), CLI.cert("bad/photo.jpg")])
        #expect(result.status == 2)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(json["schema_version"] as? Int == 1)
        let files = try #require(json["files"] as? [[String: Any]])
        #expect(files.count == 2)
        let certificate = try #require(files[0]["certificate"] as? [String: Any])
        #expect(certificate["environments"] as? [String] == ["sandbox", "production"])
        #expect((certificate["not_after"] as? String)?.hasSuffix("Z") == true)
        #expect(ISO8601DateFormatter().date(from: certificate["not_after"] as? String ?? "") != nil)
        #expect(certificate["days_left"] as? Int != nil)
        #expect(certificate["status"] as? String == "valid")
        let topics = try #require(certificate["topics"] as? [[String: Any]])
        #expect(
            topics.compactMap { $0["name"] as? String } == [
                "com.example.app", "com.example.app.voip", "com.example.app.complication",
            ]
        )
        #expect((files[0]["private_key"] as? [String: Any])?["matches_certificate"] as? Bool == true)
        #expect((files[1]["error"] as? [String: Any])?["code"] as? String == "not_a_certificate")
        #expect(!result.stdout.contains(Self.password))
    }

    @Test(
        .enabled(
            if: FileManager.default.fileExists(atPath: CLI.appleIssued.path),
            "../shared/testdata/apple-issued is absent"
        )
    )
    func appleIssuedThroughTheBinary() throws {
        let path = CLI.appleIssued.appendingPathComponent("universal-2017.pem").path
        let result = try CLI.run(["inspect", "--json", path])
        #expect(result.status == 1)  // expired
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let certificate = try #require((json["files"] as? [[String: Any]])?.first?["certificate"] as? [String: Any])
        #expect(
            certificate["sha256"] as? String
                == "D6:A4:A9:EF:3C:7F:CF:C9:A8:00:AF:96:E1:7B:D2:45:CF:61:27:54:CB:FB:CF:24:F6:8F:F2:72:12:CD:B1:06"
        )
        #expect(certificate["wwdr_generation"] as? String == "G1")
        #expect(certificate["status"] as? String == "expired")
    }
}

/// The password prompt on a real terminal (a pty): no echo, a second chance after a wrong
/// answer, and neither answer ever on the screen.
struct TerminalPromptTests {
    @Test func promptsWithoutEchoAndRetriesOnce() throws {
        let driver = """
            import os, pty, sys, time, select
            pid, fd = pty.fork()
            if pid == 0:
                os.execv(sys.argv[1], [sys.argv[1], "inspect", sys.argv[2]])
            screen = b""
            def read_until(marker, limit=20):
                global screen
                end = time.time() + limit
                while marker not in screen and time.time() < end:
                    ready, _, _ = select.select([fd], [], [], 0.2)
                    if ready:
                        try: screen += os.read(fd, 4096)
                        except OSError: return
            read_until(b"Password for")
            os.write(fd, b"first-wrong-answer\\n")
            read_until(b"Wrong password, try again")
            os.write(fd, os.environb[b"PROMPT_ANSWER"] + b"\\n")
            read_until(b"matches the certificate")
            _, status = os.waitpid(pid, 0)
            read_until(b"\\0", limit=1)
            sys.stdout.write(screen.decode("utf-8", "replace"))
            sys.exit(os.waitstatus_to_exitcode(status))
            """
        let result = try CLI.runProgram(
            "python3",
            ["-c", driver, CLI.binary, CLI.cert("p12/keychain-legacy.p12")],
            environment: ["PROMPT_ANSWER": "apnsctl-test"],
            timeout: 60
        )
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("Password for PKCS#12 bundle"))
        #expect(result.stdout.contains("Wrong password, try again"))
        #expect(result.stdout.contains("matches the certificate"))
        #expect(!result.stdout.contains("first-wrong-answer"))
        #expect(!result.stdout.contains("apnsctl-test"))
    }
}

/// The moment certs/mint.sh ran, from its manifest.
enum ManifestDates {
    static let mintedAt: Date = {
        let url = CLI.certs.appendingPathComponent("manifest.json")
        guard let data = try? Data(contentsOf: url),
            let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let text = json["minted_at"] as? String, let date = ISO8601DateFormatter().date(from: text)
        else {
            fatalError("certs/manifest.json has no minted_at; run certs/mint.sh")
        }
        return date
    }()
}

import Foundation
import TestSupport
import Testing

/// Every file the tool reads has a limit fitting its kind, and a PKCS#12 file cannot make it
/// derive keys for minutes: an endless file or a hostile bundle gets a clear error, not gigabytes
/// of memory or a quarter of an hour of CPU.
struct BoundedInputTests {
    static let password = "apnsctl-test"
    static let token = String(repeating: "ab", count: 32)
    /// Far above what any command needs for these inputs, far below what reading one whole would take.
    static let peakLimitKB = 100 * 1024

    /// Runs apnsctl under /usr/bin/time and returns the result with the child's peak RSS in KB.
    static func measured(_ arguments: [String]) throws -> (CLI.Result, Int) {
        let marker = "apnsctl-peak-rss-kb="
        var result = try CLI.runProgram(
            "/usr/bin/time",
            ["-f", "\(marker)%M", CLI.binary] + arguments,
            environment: ["P12": password]
        )
        let line = try #require(result.stderr.split(separator: "\n").last { $0.hasPrefix(marker) })
        let peak = try #require(Int(line.dropFirst(marker.count)))
        result.stderr = result.stderr.split(separator: "\n").filter { !$0.hasPrefix(marker) }.joined(separator: "\n")
        // /usr/bin/time says "Command exited with non-zero status N" and exits with the status.
        return (result, peak)
    }

    static let credential = CLI.cert("p12/3des-only.p12")
    static let send = ["send", credential, "--password-env", "P12", "--token", token, "--gateway", "127.0.0.1:1"]

    /// Each option or argument that names a file, given /dev/zero, and the kind the error names.
    static let zeroCases: [([String], String)] = [
        (["inspect", "/dev/zero"], "certificate file"),
        (["check", "/dev/zero"], "certificate file"),
        (["handshake", "/dev/zero", "--gateway", "127.0.0.1:1"], "certificate file"),
        (["send", "/dev/zero", "--token", token, "--alert", "hi", "--gateway", "127.0.0.1:1"], "certificate file"),
        (send + ["--payload", "/dev/zero"], "payload"),
        (send + ["--alert", "hi", "--ca", "/dev/zero"], "CA bundle"),
        (
            send + ["--push-type", "liveactivity", "--event", "update", "--content-state", "/dev/zero"],
            "payload"
        ),
        (["gateway", "serve", "--port", "0", "--devices", "/dev/zero"], "device list"),
        (["gateway", "serve", "--port", "0", "--client-ca", "/dev/zero"], "CA bundle"),
        (
            ["gateway", "serve", "--port", "0", "--team-id", "ABCDE12345", "--token-key", "ABC123DEFG=/dev/zero"],
            "public key file"
        ),
        (
            ["gateway", "serve", "--port", "0", "--cert", "/dev/zero", "--key", CLI.cert("gateway/server.key")],
            "certificate file"
        ),
    ]

    @Test(arguments: zeroCases)
    func anEndlessFileIsRefusedAtItsKindsLimit(_ arguments: [String], _ kind: String) throws {
        let (result, peak) = try Self.measured(arguments)
        // check reports on standard output, as it does every credential it could not check.
        let said = result.stdout + result.stderr
        #expect(result.status == 2, "\(arguments): \(said)")
        #expect(said.contains("/dev/zero"), "\(arguments): \(said)")
        #expect(said.contains("This \(kind) goes on past"), "\(arguments): \(said)")
        #expect(said.contains("hint:") || said.contains("→"), "\(arguments): \(said)")
        #expect(peak < Self.peakLimitKB, "\(arguments): peak RSS \(peak) KB")
    }

    /// A token key is told by its name: an endless file named like one.
    @Test func anEndlessTokenKeyIsRefused() throws {
        let folder = try TemporaryFolder()
        let key = folder.path("AuthKey_ABC123DEFG.p8")
        try FileManager.default.createSymbolicLink(atPath: key, withDestinationPath: "/dev/zero")
        for arguments in [
            ["inspect", key],
            ["import", key, "--team-id", "ABCDE12345", "--store", folder.path("store")],
            [
                "send", key, "--team-id", "ABCDE12345", "--topic", "com.example.app", "--token", Self.token,
                "--alert", "hi", "--gateway", "127.0.0.1:1",
            ],
        ] {
            let (result, peak) = try Self.measured(arguments)
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("This token key goes on past 64 KiB"), "\(arguments): \(result.stderr)")
            #expect(peak < Self.peakLimitKB, "\(arguments): peak RSS \(peak) KB")
        }
    }

    @Test func importOfAnEndlessFileIsRefused() throws {
        let folder = try TemporaryFolder()
        let (result, peak) = try Self.measured(["import", "/dev/zero", "--store", folder.path("store")])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("/dev/zero: This certificate file goes on past 1 MiB"), "\(result.stderr)")
        #expect(peak < Self.peakLimitKB, "peak RSS \(peak) KB")
        #expect(!FileManager.default.fileExists(atPath: folder.path("store/index.json")))
    }

    @Test func aRegularFileIsRefusedByItsSizeWithJSON() throws {
        let folder = try TemporaryFolder()
        let big = folder.path("payload.json")
        try Data(repeating: UInt8(ascii: " "), count: 70 << 10).write(to: URL(fileURLWithPath: big))
        let (result, _) = try Self.measured(Self.send + ["--payload", big, "--json"])
        #expect(result.status == 2, "\(result.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let error = try #require(json["error"] as? [String: Any], "\(result.stdout)")
        #expect(error["code"] as? String == "file_too_large")
        #expect((error["message"] as? String)?.contains("is 70 KiB, more than the 64 KiB") == true, "\(error)")
    }

    // MARK: Files that never end

    /// A FIFO nobody writes to, read by a command that takes a certificate file: refused once the
    /// wait for a stream is over, not waited on for ever (the run's own deadline is four times that).
    @Test(arguments: ["inspect", "import", "check", "send", "handshake"])
    func aFIFONobodyWritesToIsRefused(_ command: String) throws {
        let folder = try TemporaryFolder()
        let fifo = folder.path("bundle.p12")
        #expect(mkfifo(fifo, 0o600) == 0)
        let result = try CLI.run(
            Self.bundleCommands(fifo, store: folder.path("store")).first { $0[0] == command } ?? [],
            environment: ["P12": Self.password],
            timeout: 120
        )
        let said = result.stdout + result.stderr
        #expect(result.status == 2, "\(said)")
        #expect(said.contains(fifo), "\(said)")
        #expect(said.contains("Nothing came from this pipe, FIFO or device in 30 seconds"), "\(said)")
        #expect(said.contains("hint:") || said.contains("→"), "\(said)")
        #expect(!FileManager.default.fileExists(atPath: folder.path("store/index.json")))
    }

    /// A folder, named where a certificate file goes: refused before anything is read.
    @Test func aFolderIsRefusedByEveryCommand() throws {
        let folder = try TemporaryFolder()
        for arguments in Self.bundleCommands(folder.url.path, store: folder.path("store")) {
            let result = try CLI.run(arguments, environment: ["P12": Self.password])
            let said = result.stdout + result.stderr
            #expect(result.status == 2, "\(arguments): \(said)")
            #expect(said.contains("This is a folder, not a certificate file"), "\(arguments): \(said)")
        }
    }

    /// A password file that is a FIFO nobody writes to: the same bound.
    @Test func aPasswordFIFONobodyWritesToIsRefused() throws {
        let folder = try TemporaryFolder()
        let fifo = folder.path("password")
        #expect(mkfifo(fifo, 0o600) == 0)
        let result = try CLI.run(["inspect", Self.credential, "--password-file", fifo], timeout: 120)
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("No password line came from \(fifo) in 30 seconds"), "\(result.stderr)")
    }

    /// A FIFO with a writer, and a writer that stops without closing it.
    @Test func aFIFOIsReadWhenWrittenAndRefusedWhenItStalls() throws {
        let folder = try TemporaryFolder()
        let fifo = folder.path("bundle.p12")
        #expect(mkfifo(fifo, 0o600) == 0)
        let written = try CLI.runProgram(
            "bash",
            ["-c", #"cat "$1" > "$2" & "$0" inspect "$2" --password-env P12"#, CLI.binary, Self.credential, fifo],
            environment: ["P12": Self.password]
        )
        #expect(written.status == 0, "\(written.stderr)")
        #expect(written.stdout.contains("PKCS#12 bundle"), "\(written.stdout)")

        // The start of the bundle, and the FIFO held open for writing by the shell, which
        // writes no more: no end ever comes.
        let stalled = try CLI.runProgram(
            "bash",
            [
                "-c", #"exec 3<>"$2"; head -c 100 "$1" >&3; "$0" inspect "$2" --password-env P12 3>&-"#,
                CLI.binary, Self.credential, fifo,
            ],
            environment: ["P12": Self.password],
            timeout: 120
        )
        #expect(stalled.status == 2, "\(stalled.stderr)")
        #expect(stalled.stderr.contains("did not end within 30 seconds (100 bytes came)"), "\(stalled.stderr)")
    }

    // MARK: PKCS#12 iteration counts

    static let hostileCount = Int(Int32.max)

    /// A bundle written by the openssl tool with `iterations` and then edited: `mac` edits the
    /// MAC's count only; otherwise every encryption's (the file has no MAC then).
    static func hostileBundle(in folder: TemporaryFolder, mac: Bool) throws -> String {
        let source = folder.path("source.p12")
        let marker = 2049
        let written = try CLI.runProgram(
            "openssl",
            [
                "pkcs12", "-export", "-in", CLI.cert("identities/sandbox.pem"), "-inkey",
                CLI.cert("identities/sandbox.key"), "-passout", "env:P12", "-iter", String(marker), "-out", source,
            ] + (mac ? [] : ["-nomac"]),
            environment: ["P12": password]
        )
        try #require(written.status == 0, "\(written.stderr)")
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: source)))
        let edited = try #require(DEREdit.replacingIntegers(bytes, marker, with: hostileCount, nested: !mac))
        #expect(edited != bytes)
        let path = folder.path(mac ? "mac-iterations.p12" : "pbe-iterations.p12")
        try Data(edited).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func bundleCommands(_ file: String, store: String) -> [[String]] {
        [
            ["inspect", file, "--password-env", "P12"],
            ["check", file, "--password-env", "P12"],
            ["import", file, "--password-env", "P12", "--store", store],
            ["send", file, "--password-env", "P12", "--token", token, "--alert", "hi", "--gateway", "127.0.0.1:1"],
            ["handshake", file, "--password-env", "P12", "--gateway", "127.0.0.1:1"],
        ]
    }

    @Test(arguments: [true, false])
    func aBundleAskingForBillionsOfIterationsIsRefusedBeforeAnyWork(_ mac: Bool) throws {
        let folder = try TemporaryFolder()
        let file = try Self.hostileBundle(in: folder, mac: mac)
        for arguments in Self.bundleCommands(file, store: folder.path("store")) {
            let (result, peak) = try Self.measured(arguments)
            // check reports on standard output, as it does every credential it could not check.
            let said = result.stdout + result.stderr
            #expect(result.status == 2, "\(arguments): \(said)")
            #expect(
                said.contains("2,147,483,647 password-hashing iterations"),
                "\(arguments): \(said)"
            )
            #expect(
                said.contains(mac ? "integrity check (MAC)" : "the encryption of its"),
                "\(arguments): \(said)"
            )
            #expect(!said.contains("Wrong password"), "\(arguments): \(said)")
            #expect(peak < Self.peakLimitKB, "\(arguments): peak RSS \(peak) KB")
        }
        let json = try CLI.run(
            ["inspect", "--json", file, "--password-env", "P12"],
            environment: ["P12": Self.password]
        )
        #expect(json.status == 2)
        #expect(json.stdout.contains("excessive_iterations"), "\(json.stdout)")
    }

    @Test func anEncryptedKeyAskingForBillionsOfIterationsIsRefused() throws {
        let folder = try TemporaryFolder()
        let marker = 2049
        let encrypted = try CLI.runProgram(
            "openssl",
            [
                "pkcs8", "-topk8", "-in", CLI.cert("identities/sandbox.key"), "-v2", "aes-256-cbc", "-iter",
                String(marker), "-passout", "env:P12", "-outform", "DER", "-out", folder.path("key.der"),
            ],
            environment: ["P12": Self.password]
        )
        try #require(encrypted.status == 0, "\(encrypted.stderr)")
        let der = [UInt8](try Data(contentsOf: URL(fileURLWithPath: folder.path("key.der"))))
        let edited = try #require(DEREdit.replacingIntegers(der, marker, with: Self.hostileCount))
        let pem =
            "-----BEGIN ENCRYPTED PRIVATE KEY-----\n"
            + Data(edited).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
            + "\n-----END ENCRYPTED PRIVATE KEY-----\n"
        let bundle = folder.path("bundle.pem")
        let certificate = try String(contentsOfFile: CLI.cert("identities/sandbox.pem"), encoding: .utf8)
        try (certificate + pem).write(toFile: bundle, atomically: true, encoding: .utf8)
        let (result, peak) = try Self.measured(["inspect", bundle, "--password-env", "P12"])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("The private key asks for 2,147,483,647"), "\(result.stderr)")
        #expect(peak < Self.peakLimitKB, "peak RSS \(peak) KB")
    }

    // MARK: Paths

    /// A name that is not UTF-8, as a certificate and as a password file.
    @Test func aFileNameThatIsNotUTF8OpensAndImports() throws {
        let folder = try TemporaryFolder()
        // "café.p12" in Latin-1: the é is the single byte E9.
        let script = #"""
            cd "$1" && cp "$2" "$(printf 'caf\351.p12')" && name=$(printf 'caf\351.p12') &&
            printf '%s\n' "$P12" > "$(printf 'pass\351')" &&
            "$0" inspect "$name" --password-env P12 && "$0" check "./$name" --password-file "$(printf 'pass\351')" &&
            "$0" import "$name" --password-env P12 --store store --json
            """#
        let result = try CLI.runProgram(
            "bash",
            ["-c", script, CLI.binary, folder.url.path, Self.credential],
            environment: ["P12": Self.password]
        )
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("PKCS#12 bundle"), "\(result.stdout)")
        #expect(result.stdout.contains(#""imported""#), "\(result.stdout)")
    }

    @Test func aProcessSubstitutionIsRecordedAsThePathGiven() throws {
        let folder = try TemporaryFolder()
        let store = folder.path("store")
        let imported = try CLI.runProgram(
            "bash",
            ["-c", #""$0" import <(cat "$1") --password-env P12 --store "$2""#, CLI.binary, Self.credential, store],
            environment: ["P12": Self.password]
        )
        #expect(imported.status == 0, "\(imported.stderr)")
        let listed = try CLI.run(["list", "--json", "--store", store])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any])
        let entries = try #require(json["credentials"] as? [[String: Any]])
        let source = try #require(entries.first?["source"] as? String, "\(listed.stdout)")
        #expect(source.wholeMatch(of: /\/dev\/fd\/\d+/) != nil, "recorded as \(source)")
    }

    // MARK: Standard output

    @Test(arguments: [["--version"], ["--help"], ["help", "inspect"], ["inspect", "--help"], ["list", "--json"]])
    func everyOutputToAFullDiskIsExit2(_ arguments: [String]) throws {
        let folder = try TemporaryFolder()
        let result = try CLI.runProgram(
            "bash",
            ["-c", #""$0" "$@" > /dev/full"#, CLI.binary] + arguments,
            environment: ["APNSCTL_STORE": folder.path("store")]
        )
        #expect(result.status == 2, "\(arguments): \(result.stderr)")
        #expect(result.stderr.contains("standard output could not be written"), "\(arguments): \(result.stderr)")
    }
}

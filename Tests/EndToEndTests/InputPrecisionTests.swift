import Foundation
import TestSupport
import Testing

/// Input is taken as given: strictly (no silently corrected dates), the same bytes from every
/// password source, files however they arrive, text with or without a byte-order mark.
struct InputPrecisionTests {
    @Test(arguments: ["2027-02-30", "2027-13-01", "2027-01-31T24:00:00Z", "31/01/2027"])
    func datesThatDoNotExistAreRefused(_ date: String) throws {
        let result = try CLI.run(
            ["check", CLI.cert("p12/3des-only.p12"), "--password-env", "P", "--at", date],
            environment: ["P": "apnsctl-test"]
        )
        #expect(result.status == 64, "\(date): \(result.stderr)")
        #expect(result.stderr.contains(date))
    }

    @Test func aPasswordThatIsNotUTF8IsTheSameFromAFileAndFromTheEnvironment() throws {
        let folder = try TemporaryFolder()
        let password = folder.path("password")
        // "café" in Latin-1: the é is the single byte 0xE9, not valid UTF-8.
        try Data([0x63, 0x61, 0x66, 0xE9]).write(to: URL(fileURLWithPath: password))
        let bundle = folder.path("latin1.p12")
        let made = try CLI.runProgram(
            "openssl",
            [
                "pkcs12", "-export", "-in", CLI.cert("pem/sandbox-bag-attributes.pem"), "-out", bundle,
                "-passout", "file:\(password)",
            ]
        )
        try #require(made.status == 0, "\(made.stderr)")
        let fromFile = try CLI.run(["inspect", bundle, "--password-file", password])
        #expect(fromFile.status == 0, "\(fromFile.stderr)")
        let fromEnvironment = try CLI.runProgram(
            "bash",
            ["-c", #"export P="$(cat "$1")"; "$0" inspect "$2" --password-env P"#, CLI.binary, password, bundle]
        )
        #expect(fromEnvironment.status == 0, "\(fromEnvironment.stderr)")
    }

    @Test func filesAreReadHoweverTheyArrive() throws {
        let file = CLI.cert("pem/sandbox-bag-attributes.pem")
        // Process substitution (a FIFO under /dev/fd), standard input as a path, and "-".
        for (script, label) in [
            (#""$0" inspect <(cat "$1")"#, "process substitution"),
            (#""$0" inspect /dev/stdin < "$1""#, "/dev/stdin"),
        ] {
            let result = try CLI.runProgram("bash", ["-c", script, CLI.binary, file])
            #expect(result.status == 0, "\(label): \(result.stderr)")
            #expect(result.stdout.contains("com.example.app"), "\(label)")
        }
    }

    @Test func aByteOrderMarkBeforeAPEMIsNotPartOfIt() throws {
        let folder = try TemporaryFolder()
        let marked = folder.path("bom.pem")
        var bytes: [UInt8] = [0xEF, 0xBB, 0xBF]
        bytes += try [UInt8](Data(contentsOf: URL(fileURLWithPath: CLI.cert("pem/sandbox-bag-attributes.pem"))))
        try Data(bytes).write(to: URL(fileURLWithPath: marked))
        let result = try CLI.run(["inspect", marked])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("com.example.app"))
    }
}

extension InputPrecisionTests {
    /// A MAC that fails is "wrong password or damaged file", unless the password provably decrypts
    /// the contents: then the file is damaged, and says so.
    @Test func aFlippedBitIsNotCalledAWrongPassword() throws {
        let folder = try TemporaryFolder()
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: CLI.cert("p12/openssl3-default.p12"))))
        bytes[bytes.count - 30] ^= 0x01  // inside the MAC's digest: the contents stay as they were
        let damaged = folder.path("damaged.p12")
        try Data(bytes).write(to: URL(fileURLWithPath: damaged))
        let right = try CLI.run(["inspect", damaged, "--password-env", "P"], environment: ["P": "apnsctl-test"])
        #expect(right.status == 2)
        #expect(right.stderr.contains("damaged"), "\(right.stderr)")
        #expect(!right.stderr.lowercased().contains("wrong password"), "\(right.stderr)")
        let wrong = try CLI.run(
            ["inspect", CLI.cert("p12/openssl3-default.p12"), "--password-env", "P"],
            environment: ["P": "nope"]
        )
        #expect(wrong.status == 2)
        #expect(wrong.stderr.contains("Wrong password or damaged file"), "\(wrong.stderr)")
        #expect(!wrong.stderr.contains("intact"))
    }
}

extension InputPrecisionTests {
    /// What an option's own validation refuses is a usage error, whatever refuses it.
    @Test func anInvalidAliasIsAUsageError() throws {
        let folder = try TemporaryFolder()
        let result = try CLI.run(
            ["import", CLI.cert("p12/3des-only.p12"), "--alias", "bad alias/..", "--store", folder.path("store")]
        )
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains("bad alias/.."))
    }
}

import Foundation
import TestSupport
import Testing

/// A certificate crafted with terminal control sequences in its subject and topics (clear the
/// screen, set the title, ring the bell, return the carriage, fake a "✓ valid" line) is shown,
/// never obeyed, in every output; its metrics still parse.
struct HostileTextTests {
    /// Mints the crafted certificate (signed by the test WWDR CA) and returns a PEM bundle.
    static func craft(in folder: TemporaryFolder) throws -> String {
        let script = #"""
            set -e
            cd "$1"
            printf '[req]\ndistinguished_name=dn\nstring_mask=utf8only\nutf8=yes\n[dn]\n[push]\n1.2.840.113635.100.6.3.1=DER:0500\n1.2.840.113635.100.6.3.6=ASN1:SEQUENCE:topics\n[topics]\nt1=UTF8String:com.evil\x1b[31m\x07\rX\nk1=SEQUENCE:kinds\n[kinds]\nk=UTF8String:app\n' > evil.cnf
            openssl req -new -newkey rsa:2048 -nodes -keyout evil.key -config evil.cnf -utf8 \
              -subj $'/UID=com.evil\e]0;pwned\a/CN=Apple Push Services: com.evil\e[2J\r\n\xe2\x9c\x93 valid/OU=ABCDE12345' \
              -out evil.csr 2>/dev/null
            openssl x509 -req -in evil.csr -CA "$2" -CAkey "$3" -days 30 -extfile evil.cnf -extensions push \
              -out evil.pem 2>/dev/null
            cat evil.pem evil.key > evil-bundle.pem
            """#
        let made = try CLI.runProgram(
            "bash",
            ["-c", script, "craft", folder.path(""), CLI.cert("ca/wwdr-test-ca.pem"), CLI.cert("ca/wwdr-test-ca.key")]
        )
        try #require(made.status == 0, "\(made.stderr)")
        return folder.path("evil-bundle.pem")
    }

    static func rawControls(_ text: String) -> [UInt32] {
        text.unicodeScalars.map(\.value).filter {
            ($0 < 0x20 && $0 != 0x0A && $0 != 0x09) || (0x7F...0x9F).contains($0)
        }
    }

    @Test func controlSequencesAreShownNotObeyed() throws {
        let folder = try TemporaryFolder()
        let evil = try Self.craft(in: folder)
        for arguments in [["inspect", evil], ["check", evil], ["check", "--format", "prometheus", evil]] {
            let result = try CLI.run(arguments)
            #expect(Self.rawControls(result.stdout).isEmpty, "\(arguments): raw control bytes on stdout")
            #expect(Self.rawControls(result.stderr).isEmpty, "\(arguments): raw control bytes on stderr")
            #expect(!result.stdout.contains("\n✓ valid"), "\(arguments): no faked line")
        }
        let inspected = try CLI.run(["inspect", evil])
        #expect(inspected.stdout.contains("com.evil^[]0;pwned^G"), "shown in caret notation")

        // Prometheus' own parser reads the whole output.
        let families = try Monitoring.parse(try CLI.run(["check", "--format", "prometheus", evil]).stdout)
        #expect(families.values.contains { !$0.samples.isEmpty }, "\(families.keys.sorted())")
    }
}

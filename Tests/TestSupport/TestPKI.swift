import Foundation
import Testing

/// Mints push identities at test time with the openssl CLI and the committed test CA, for
/// cases whose dates must be relative to now (expiring soon, a newer rotation certificate).
public enum TestPKI {
    public struct Environments: OptionSet, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        public static let sandbox = Environments(rawValue: 1)
        public static let production = Environments(rawValue: 2)
    }

    /// Writes a PEM bundle (certificate + unencrypted key) and returns its path.
    public static func mint(
        in folder: TemporaryFolder,
        name: String,
        bundle: String,
        days: Int,
        environments: Environments = [.sandbox, .production]
    ) throws -> String {
        let key = folder.path("\(name).key")
        let request = folder.path("\(name).csr")
        let certificate = folder.path("\(name).pem")
        let extensions = folder.path("\(name).ext")
        var lines = ["[push]"]
        if environments.contains(.sandbox) { lines.append("1.2.840.113635.100.6.3.1=DER:0500") }
        if environments.contains(.production) { lines.append("1.2.840.113635.100.6.3.2=DER:0500") }
        lines.append("basicConstraints=CA:FALSE")
        try lines.joined(separator: "\n").write(toFile: extensions, atomically: true, encoding: .utf8)
        let prefix =
            environments == [.sandbox]
            ? "Apple Development IOS Push Services"
            : environments == [.production] ? "Apple Production IOS Push Services" : "Apple Push Services"
        let subject = "/UID=\(bundle)/CN=\(prefix): \(bundle)/OU=ABCDE12345/O=Example Corp/C=US"
        try openssl(["req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-subj", subject, "-out", request])
        try openssl([
            "x509", "-req", "-in", request, "-CA", CLI.cert("ca/wwdr-test-ca.pem"), "-CAkey",
            CLI.cert("ca/wwdr-test-ca.key"),
            "-days", String(days), "-extfile", extensions, "-extensions", "push", "-set_serial",
            "0x" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16), "-out", certificate,
        ])
        let bundlePath = folder.path("\(name)-bundle.pem")
        try (String(contentsOfFile: certificate, encoding: .utf8) + String(contentsOfFile: key, encoding: .utf8))
            .write(toFile: bundlePath, atomically: true, encoding: .utf8)
        return bundlePath
    }

    public static func openssl(_ arguments: [String]) throws {
        let result = try CLI.runProgram("openssl", arguments)
        guard result.status == 0 else {
            throw CLIError(message: "openssl \(arguments.joined(separator: " ")) failed: \(result.stderr)")
        }
    }
}

public struct CLIError: Error, CustomStringConvertible {
    public var message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}

import Foundation
import Testing

/// The tests' one PKI. Its roots are the committed test CAs in certs/ (certs/mint.sh made them
/// and the committed identities: certs/README.md); what a test needs at run time is made here,
/// with the openssl CLI: push identities whose dates are relative to now (expiring soon, a newer
/// rotation certificate), Apple's part of onboarding (a push certificate for a CSR), a gateway
/// server certificate for another name, token keys; and, with `apnsctl gateway mint-identity`,
/// the client CA and identities the local gateway's own tests connect with (`Identities`).
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
            "x509", "-req", "-in", request, "-CA", TestPaths.cert("ca/wwdr-test-ca.pem"), "-CAkey",
            TestPaths.cert("ca/wwdr-test-ca.key"),
            "-days", String(days), "-extfile", extensions, "-extensions", "push", "-set_serial",
            "0x" + serial(), "-out", certificate,
        ])
        let bundlePath = folder.path("\(name)-bundle.pem")
        try (String(contentsOfFile: certificate, encoding: .utf8) + String(contentsOfFile: key, encoding: .utf8))
            .write(toFile: bundlePath, atomically: true, encoding: .utf8)
        return bundlePath
    }

    /// Apple's part: a certificate for `csr` with the push extensions and the subject Apple
    /// writes (UID, CN, OU, O, C), signed by the stand-in WWDR CA, as DER (what the portal hands
    /// out), written to `name`.cer in `folder`. `validFrom` gives a start date other than now (a
    /// certificate not yet valid).
    public static func issue(
        csr: String,
        bundle: String,
        in folder: TemporaryFolder,
        name: String = "aps",
        validFrom: Date? = nil
    ) throws -> String {
        let ca = folder.path("\(name)-ca")
        try FileManager.default.createDirectory(atPath: ca + "/new", withIntermediateDirectories: true)
        try "".write(toFile: ca + "/index.txt", atomically: true, encoding: .utf8)
        try "\(serial())\n".write(toFile: ca + "/serial", atomically: true, encoding: .utf8)
        let config = """
            [ ca ]
            default_ca = wwdr
            [ wwdr ]
            database = \(ca)/index.txt
            serial = \(ca)/serial
            new_certs_dir = \(ca)/new
            certificate = \(TestPaths.cert("ca/wwdr-test-ca.pem"))
            private_key = \(TestPaths.cert("ca/wwdr-test-ca.key"))
            default_md = sha256
            policy = policy_any
            unique_subject = no
            email_in_dn = no
            copy_extensions = none
            [ policy_any ]
            UID = optional
            commonName = optional
            organizationalUnitName = optional
            organizationName = optional
            countryName = optional
            [ push ]
            1.2.840.113635.100.6.3.1 = DER:0500
            1.2.840.113635.100.6.3.2 = DER:0500
            basicConstraints = CA:FALSE
            keyUsage = critical, digitalSignature
            extendedKeyUsage = clientAuth

            """
        try config.write(toFile: ca + "/ca.cnf", atomically: true, encoding: .utf8)
        let pem = ca + "/cert.pem"
        try openssl(
            [
                "ca", "-batch", "-config", ca + "/ca.cnf", "-notext", "-preserveDN", "-utf8",
            ] + validity(from: validFrom) + [
                "-extensions", "push", "-subj",
                "/UID=\(bundle)/CN=Apple Push Services: \(bundle)/OU=ABCDE12345/O=Example Corp/C=US",
                "-in", csr, "-out", pem,
            ]
        )
        let der = folder.path("\(name).cer")
        try openssl(["x509", "-in", pem, "-outform", "DER", "-out", der])
        return der
    }

    /// 395 days from now, or from `start` when given (openssl ca counts -days from now, so both ends are set).
    static func validity(from start: Date?) -> [String] {
        guard let start else { return ["-days", "395"] }
        let format = DateFormatter()
        format.locale = Locale(identifier: "en_US_POSIX")
        format.timeZone = TimeZone(identifier: "UTC")
        format.dateFormat = "yyyyMMddHHmmss'Z'"
        return ["-startdate", format.string(from: start), "-enddate", format.string(from: start + 395 * 86_400)]
    }

    /// A certificate signing request for a new RSA key; its path (the key is written beside it,
    /// or thrown away when `key` is nil).
    public static func request(
        in folder: TemporaryFolder,
        name: String,
        subject: String,
        key: String? = nil
    ) throws
        -> String
    {
        let csr = folder.path("\(name).csr")
        try openssl([
            "req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", key ?? "/dev/null", "-subj", subject, "-out",
            csr,
        ])
        return csr
    }

    /// A TLS server certificate for `host` from the committed gateway test CA (the CA the
    /// gateway's clients are told to trust with --ca): the certificate's and the key's paths.
    public static func serverIdentity(
        host: String,
        in folder: TemporaryFolder,
        name: String
    ) throws -> (
        certificate: String, key: String
    ) {
        let extensions = folder.path("\(name).ext")
        try "[server]\nsubjectAltName=DNS:\(host)\nextendedKeyUsage=serverAuth\n".write(
            toFile: extensions,
            atomically: true,
            encoding: .utf8
        )
        let key = folder.path("\(name).key")
        let csr = try request(in: folder, name: name, subject: "/CN=\(host)", key: key)
        let certificate = folder.path("\(name).pem")
        try openssl([
            "x509", "-req", "-in", csr, "-CA", TestPaths.cert("ca/gateway-test-ca.pem"), "-CAkey",
            TestPaths.cert("ca/gateway-test-ca.key"), "-days", "30", "-extfile", extensions, "-extensions", "server",
            "-set_serial", "0x" + serial(), "-out", certificate,
        ])
        return (certificate, key)
    }

    /// A new EC token key (PKCS#8 PEM, as a .p8 is) at `path`, on `curve`; its public key (PEM,
    /// what the local gateway verifies tokens with) at `publicKey` when given.
    public static func tokenKey(at path: String, curve: String = "P-256", publicKey: String? = nil) throws {
        try openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:\(curve)", "-out", path])
        if let publicKey { try openssl(["pkey", "-in", path, "-pubout", "-out", publicKey]) }
    }

    /// A random serial number, in hex.
    static func serial() -> String { String(UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16)) }

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

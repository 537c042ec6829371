import Foundation
import TestSupport
import Testing

/// Every PKCS#12 shape the openssl tool writes is read by every command that takes a
/// certificate file: they share one reader, so a bundle one of them reads, all of them read.
struct PKCS12VariantsTests {
    static let password = "apnsctl-test"
    static let token = String(repeating: "ab", count: 32)

    /// A bundle written by `openssl pkcs12 -export` of the sandbox identity with `options`, and
    /// whether it needs the password.
    struct Variant: Sendable, CustomTestStringConvertible {
        var name: String
        var options: [String]
        var needsPassword: Bool
        var testDescription: String { name }
    }

    static let variants: [Variant] = [
        Variant(
            name: "no MAC, nothing encrypted",
            options: ["-nomac", "-certpbe", "NONE", "-keypbe", "NONE", "-passout", "pass:"],
            needsPassword: false
        ),
        Variant(name: "no MAC, a password", options: ["-nomac", "-passout", "env:P12"], needsPassword: true),
        Variant(
            name: "no MAC, a password, everything encrypted",
            options: ["-nomac", "-certpbe", "AES-256-CBC", "-keypbe", "AES-256-CBC", "-passout", "env:P12"],
            needsPassword: true
        ),
        Variant(name: "an empty password", options: ["-passout", "pass:"], needsPassword: false),
        Variant(name: "legacy: RC2-40 and 3DES", options: ["-legacy", "-passout", "env:P12"], needsPassword: true),
        Variant(
            name: "3DES with a SHA-1 MAC",
            options: [
                "-certpbe", "PBE-SHA1-3DES", "-keypbe", "PBE-SHA1-3DES", "-macalg", "sha1", "-passout", "env:P12",
            ],
            needsPassword: true
        ),
        Variant(name: "AES-256 (OpenSSL 3's default)", options: ["-passout", "env:P12"], needsPassword: true),
        Variant(
            name: "many bags: a chain of two CAs and friendly names",
            options: [
                "-certfile", "CHAIN", "-name", "Push: com.example.app", "-caname", "WWDR test CA", "-caname",
                "Gateway test CA", "-passout", "env:P12",
            ],
            needsPassword: true
        ),
    ]

    static func write(_ variant: Variant, in folder: TemporaryFolder) throws -> String {
        let chain = folder.path("chain.pem")
        let authorities = try ["ca/wwdr-test-ca.pem", "ca/gateway-test-ca.pem"].map {
            try String(contentsOfFile: CLI.cert($0), encoding: .utf8)
        }
        try authorities.joined().write(toFile: chain, atomically: true, encoding: .utf8)
        let bundle = folder.path("bundle.p12")
        let written = try CLI.runProgram(
            "openssl",
            [
                "pkcs12", "-export", "-in", CLI.cert("identities/sandbox.pem"), "-inkey",
                CLI.cert("identities/sandbox.key"), "-out", bundle,
            ] + variant.options.map { $0 == "CHAIN" ? chain : $0 },
            environment: ["P12": password]
        )
        try #require(written.status == 0, "\(variant.name): \(written.stderr)")
        return bundle
    }

    @Test(arguments: variants)
    func everyCommandReadsIt(_ variant: Variant) async throws {
        let folder = try TemporaryFolder()
        let bundle = try Self.write(variant, in: folder)
        let gateway = try await RunningGateway.start(.sandbox)
        defer { Task { try? await gateway.gateway.stop() } }
        let connection = ["--gateway", "127.0.0.1:\(gateway.port)", "--ca", gateway.caFile]
        // A bundle that needs no password opens without one; one that does, with it.
        let password = variant.needsPassword ? ["--password-env", "P12"] : []

        try CLI.run(["inspect", bundle] + password, environment: ["P12": Self.password])
            .succeeded(stdout: "PKCS#12 bundle", "com.example.app", context: "\(variant.name)")

        let imported = try CLI.run(
            ["import", bundle, "--store", folder.path("store"), "--json"] + password,
            environment: ["P12": Self.password]
        ).succeeded(context: "\(variant.name)")
        #expect(imported.stdout.contains(#""imported""#), "\(variant.name): \(imported.stdout)")

        let checked = try CLI.run(["check", bundle, "--json"] + password, environment: ["P12": Self.password])
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(checked.stdout.utf8)) as? [String: Any],
            "\(variant.name): \(checked.stdout)\(checked.stderr)"
        )
        #expect(!checked.stdout.contains(#""error""#), "\(variant.name): \(checked.stdout)")
        #expect(checked.status != 2, "\(variant.name): \(report)")

        try CLI.run(["handshake", bundle] + password + connection, environment: ["P12": Self.password])
            .succeeded(stdout: "TLS handshake", context: "\(variant.name)")

        try CLI.run(
            ["send", bundle, "--token", Self.token, "--alert", "hi", "--json"] + password + connection,
            environment: ["P12": Self.password]
        ).succeeded(stdout: "apns", context: "\(variant.name)")

        if variant.needsPassword {
            // A wrong password reads as one in every command, never as a damaged file.
            for command in [["inspect", bundle], ["check", bundle], ["handshake", bundle] + connection] {
                let wrong = try CLI.run(command + password, environment: ["P12": "not-the-password"])
                let said = wrong.stdout + wrong.stderr
                #expect(wrong.status == 2, "\(variant.name) \(command[0]): \(said)")
                #expect(said.contains("Wrong password"), "\(variant.name) \(command[0]): \(said)")
                // "Wrong password or damaged file" is what a MAC can tell; proven damage reads otherwise.
                #expect(!said.contains("is damaged"), "\(variant.name) \(command[0]): \(said)")
                #expect(!said.contains("contents are damaged"), "\(variant.name) \(command[0]): \(said)")
            }
        }
    }
}

import Foundation
import TestSupport
import Testing

/// OpenSSL's libcrypto is loaded when a command first needs it, not at the program's start
/// (Sources/COpenSSLShim/loader.c): a `send` from a stored token key, the probe a deploy runs,
/// never loads it. On a host where it cannot be loaded, that probe still works, and a command
/// that needs OpenSSL (a PKCS#12 import) stops with the library's name and the package to
/// install, having changed nothing.
///
/// As in WithoutLibsecretTests, the host is a private mount namespace in which the library file
/// the dynamic loader finds is an empty file.
@Suite(
    .enabled(
        if: insideSecretService && HiddenLibrary.libcrypto.map(HiddenLibrary.canHide) == true,
        "needs the private Secret Service that scripts/test starts, and root for a private mount namespace"
    )
)
struct WithoutLibcryptoTests {
    func runWithoutLibcrypto(_ arguments: [String], environment: [String: String] = [:]) throws -> CLI.Result {
        let library = try #require(HiddenLibrary.libcrypto)
        return try CLI.runProgram(
            "unshare",
            ["--mount", "sh", "-c", "mount --bind /dev/null \"$0\" && exec \"$@\"", library, CLI.binary] + arguments,
            environment: environment,
            timeout: 30
        )
    }

    @Test func aStoredTokenKeysSendNeedsNoOpenSSLAndAnImportSaysWhatIsMissing() throws {
        let store = try StoreCommandTests.Store()
        try store.importTokenKey()
        let folder = try TemporaryFolder()
        let gateway = try GatewayProcess(
            folder,
            name: "gateway",
            arguments: [
                "--token-key", "ABC123DEFG=\(CLI.cert("keys/AuthKey_ABC123DEFG.pub.pem"))", "--team-id", "ABCDE12345",
            ]
        )
        defer { gateway.process.terminate() }
        let alias = try #require(try store.listJSON().first?["credential"] as? String)

        // The whole probe: the store, the Secret Service, the key exchange, TLS, the answer.
        try runWithoutLibcrypto(
            ["send", alias, "--token", GatewayCommandTests.token, "--alert", "hi", "--store", store.path]
                + gateway.connection
        ).succeeded(stdout: "200")

        // A PKCS#12 import needs OpenSSL: it stops, naming the library and the package.
        let before = try store.run(["list", "--json"]).stdout
        try runWithoutLibcrypto(
            ["import", CLI.cert("p12/openssl3-default.p12"), "--password-env", "P12", "--store", store.path],
            environment: ["P12": "apnsctl-test"]
        ).exited(69, stderr: "OpenSSL's libcrypto cannot be loaded", "sudo apt install libssl3")
        #expect(try store.run(["list", "--json"]).stdout == before)
    }
}

/// Whether a shared library can be hidden here (root, mount namespaces), and the file to hide.
enum HiddenLibrary {
    static let libcrypto = resolved("libcrypto.so.3")

    /// The file `soname` resolves to, as the dynamic loader's cache names it.
    static func resolved(_ soname: String) -> String? {
        guard let listing = try? CLI.runProgram("ldconfig", ["-p"]), listing.status == 0 else { return nil }
        let line =
            listing.stdout.split(separator: "\n").first { $0.contains("\(soname) ") && $0.contains("x86-64") }
            ?? listing.stdout.split(separator: "\n").first { $0.contains("\(soname) ") }
        guard let path = line?.split(separator: " ").last else { return nil }
        return URL(fileURLWithPath: String(path)).resolvingSymlinksInPath().path
    }

    static func canHide(_ library: String) -> Bool {
        let probe = try? CLI.runProgram("unshare", ["--mount", "sh", "-c", "mount --bind /dev/null \"$0\"", library])
        return probe?.status == 0
    }
}

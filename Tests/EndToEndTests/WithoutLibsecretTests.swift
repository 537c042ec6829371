import Foundation
import TestSupport
import Testing

/// libsecret and GLib are loaded when the Secret Service is first needed, not at the program's
/// start (Sources/CLibSecret). On a host where libsecret cannot be loaded, what needs no secret
/// still works, and what reads or stores one says which library is missing and how to install it.
///
/// The host is made with a private mount namespace (`unshare --mount`, root only) in which the
/// library file the dynamic loader finds is an empty file: the same failure as a removed or
/// broken package, without touching the machine.
@Suite(
    .enabled(
        if: insideSecretService && HiddenLibsecret.isPossible,
        "needs the private Secret Service that scripts/test starts, and root for a private mount namespace"
    )
)
struct WithoutLibsecretTests {
    /// apnsctl with `arguments`, in a mount namespace where libsecret's file is empty.
    func runWithoutLibsecret(_ arguments: [String]) throws -> CLI.Result {
        let library = try #require(HiddenLibsecret.library)
        return try CLI.runProgram(
            "unshare",
            ["--mount", "sh", "-c", "mount --bind /dev/null \"$0\" && exec \"$@\"", library, CLI.binary] + arguments,
            timeout: 30
        )
    }

    @Test func commandsWithoutSecretsWorkAndTheOthersNameTheLibrary() throws {
        let store = try StoreCommandTests.Store()
        try store.importTokenKey()

        // Nothing of these touches the Secret Service, so nothing of them needs libsecret.
        try runWithoutLibsecret(["--version"]).succeeded()
        try runWithoutLibsecret(["inspect", CLI.cert("pem/production-cert.pem")]).succeeded()
        try runWithoutLibsecret(["check", "--skip-secrets", "--store", store.path]).succeeded()

        // A check that reads the key: could not check it (2), naming the library, with the
        // check's own way forward (what the files say, without the key).
        try runWithoutLibsecret(["check", "--store", store.path])
            .exited(2, stdout: "libsecret cannot be loaded", "--skip-secrets")

        // Storing a key: refused, naming the library and how to install it; nothing written.
        let before = try store.run(["list", "--json"]).stdout
        try runWithoutLibsecret([
            "import", CLI.cert("keys/AuthKey_ABC123DEFG.p8"), "--team-id", "ABCDE12345", "--topic",
            "com.example.other", "--alias", "other", "--store", store.path,
        ]).exited(2, stderr: "libsecret cannot be loaded", "apt install libsecret-1-0")
        #expect(try store.run(["list", "--json"]).stdout == before)
    }
}

/// Whether libsecret can be hidden here (root, mount namespaces), and the file to hide.
enum HiddenLibsecret {
    /// The file `libsecret-1.so.0` resolves to, as the dynamic loader's cache names it.
    static let library: String? = {
        guard let listing = try? CLI.runProgram("ldconfig", ["-p"]), listing.status == 0 else { return nil }
        let line = listing.stdout.split(separator: "\n").first { $0.contains("libsecret-1.so.0 ") }
        guard let path = line?.split(separator: " ").last else { return nil }
        return URL(fileURLWithPath: String(path)).resolvingSymlinksInPath().path
    }()

    static let isPossible: Bool = {
        guard let library else { return false }
        let probe = try? CLI.runProgram("unshare", ["--mount", "sh", "-c", "mount --bind /dev/null \"$0\"", library])
        return probe?.status == 0
    }()
}

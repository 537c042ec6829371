import CredentialFormats
import PushStore

/// What `apnsctl --version` prints: the release, the commit it was built from and the OpenSSL
/// library it is running with.
enum APNSCtlVersion {
    static let current = "0.1.0"

    static var text: String {
        """
        apnsctl \(current)
        commit: \(BuildInfo.commit)
        \(LinkedOpenSSL.version)
        """
    }
}

/// Where the build scripts bake in the commit. scripts/package and scripts/test write a
/// git-ignored `BuildCommit.generated.swift` beside this file whose
/// `extension BuildInfo { static let commit = "…" }` takes precedence over the default below;
/// a plain `swift build` has no such file and reports "unknown".
protocol BuildCommitDefault {}

extension BuildCommitDefault {
    static var commit: String { "unknown" }
}

enum BuildInfo: BuildCommitDefault {}

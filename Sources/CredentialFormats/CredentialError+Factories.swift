import Foundation
import PushCore

/// The factories whose message is always the same shape: the factory words it, the call site
/// gives only what differs. The others, one per code, are in `CredentialError+FileFactories.swift`
/// and `CredentialError+StoreFactories.swift`. Every factory records where the error was made.
extension CredentialError {
    /// `file_not_found`: nothing is at `path`.
    public static func fileNotFound(path: String, file: String = #fileID, line: UInt = #line) -> CredentialError {
        Self(
            .fileNotFound,
            path: path,
            "No such file.",
            hint: "Check the path; relative paths are taken from the current folder.",
            file: file,
            line: line
        )
    }

    /// `unreadable`: the file at `path` exists but cannot be read, for `reason` (the system's
    /// words, `strerror`).
    public static func unreadable(
        path: String,
        reason: String,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(
            .unreadable,
            path: path,
            "The file cannot be read (\(reason)).",
            hint: "Check its permissions (ls -l) and that it is not locked by another program.",
            file: file,
            line: line
        )
    }

    /// `alias_not_found`: no stored credential is named `alias` (nil when none was named at all).
    /// The message differs with what was looked for, so the call site words it.
    public static func aliasNotFound(
        _ alias: String?,
        _ message: String,
        hint: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.aliasNotFound, path: nil, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }
}

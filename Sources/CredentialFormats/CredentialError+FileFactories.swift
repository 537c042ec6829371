import PushCore

/// The codes of files and credential formats, each declared once with the string JSON reports give.
extension ErrorCode {
    public static let fileNotFound = ErrorCode("file_not_found")
    public static let unreadable = ErrorCode("unreadable")
    public static let isDirectory = ErrorCode("is_directory")
    public static let emptyFile = ErrorCode("empty_file")
    /// A file larger than anything of its kind, refused at its kind's limit.
    public static let fileTooLarge = ErrorCode("file_too_large")
    /// A PKCS#12 bundle or encrypted key whose iteration counts are far beyond any export's.
    public static let excessiveWork = ErrorCode("excessive_iterations")
    /// A file that would be written exists already.
    public static let fileExists = ErrorCode("file_exists", failure: .problem)
    /// A file of the store is a link or a special file, not a regular file inside the store.
    public static let notARegularFile = ErrorCode("not_a_regular_file")
    /// ``fileTooLarge`` by the name credential files gave it.
    public static var tooLarge: ErrorCode { .fileTooLarge }
}

/// The factories of the file codes whose wording or kind is always the same: a missing file's
/// default words, and a file in the way (a refusal: nothing was written). Any other code here is
/// made where it happens, `CredentialError(.unreadable, path:, message, hint:)`.
extension CredentialError {
    /// ``ErrorCode/fileNotFound`` (`file_not_found`): nothing is at `path`; a call site that
    /// knows what the file was for words it.
    public static func fileNotFound(
        path: String? = nil,
        _ message: String = "No such file.",
        hint: String? = "Check the path; relative paths are taken from the current folder.",
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.fileNotFound, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

}

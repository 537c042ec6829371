import Foundation
import Testing

/// The checks nearly every command-line test makes of a finished command, each failure showing
/// the command and all it printed (after `context`, which says which case of a loop failed).
extension CLI.Result {
    /// Expects exit 0, and each of `stdout` and `stderr` in that output; gives the result back
    /// for the checks that follow.
    @discardableResult
    public func succeeded(
        stdout: String...,
        stderr: String...,
        context: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Self {
        expect(0, stdout: stdout, stderr: stderr, context: context, sourceLocation: sourceLocation)
    }

    /// Expects exit `status`, and each of `stdout` and `stderr` in that output; gives the result
    /// back for the checks that follow.
    @discardableResult
    public func exited(
        _ status: Int32,
        stdout: String...,
        stderr: String...,
        context: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Self {
        expect(status, stdout: stdout, stderr: stderr, context: context, sourceLocation: sourceLocation)
    }

    private func expect(
        _ expected: Int32,
        stdout words: [String],
        stderr messages: [String],
        context: String?,
        sourceLocation: SourceLocation
    ) -> Self {
        let shown = "\(context.map { "\($0): " } ?? "")\(arguments.joined(separator: " ")): \(stdout)\(stderr)"
        #expect(status == expected, "\(shown)", sourceLocation: sourceLocation)
        for word in words { #expect(stdout.contains(word), "\(shown)", sourceLocation: sourceLocation) }
        for message in messages { #expect(stderr.contains(message), "\(shown)", sourceLocation: sourceLocation) }
        return self
    }

    /// What the command printed, as the JSON object it must be.
    public func json(sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
        try #require(
            try JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [String: Any],
            "not a JSON object: \(arguments.joined(separator: " ")): \(stdout)\(stderr)",
            sourceLocation: sourceLocation
        )
    }
}

/// An error as every JSON report gives it: a stable `code` for programs, a `message` for people,
/// and a `hint` that says what to do when there is one.
public struct ReportedError: Codable, Sendable, Equatable {
    public var code: String
    public var message: String
    public var hint: String?

    public init(code: String, message: String, hint: String? = nil) {
        self.code = code
        self.message = message
        self.hint = hint
    }
}

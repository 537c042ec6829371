import Foundation
import PushCore

/// Every failure to set up or run the local gateway, or to mint a test identity.
///
/// One struct with a code, like the other modules' errors: callers switch on ``code``; people
/// read ``message`` and ``hint`` (in words: the command line adds its own options from the code).
///
/// Made by static factories, one per code (`LocalGatewayError.invalidRegistry(path:_:hint:)`…),
/// which record where the error was made (``file``, ``line``: in ``debugDescription`` only).
public struct LocalGatewayError: TypedCodeError, CustomStringConvertible, CustomDebugStringConvertible {
    /// What went wrong, one of a closed set (``Code``, in `LocalGatewayError+Code.swift`); a
    /// report gives it as ``reportedCode``.
    public let code: Code
    /// The file (or files) the error is about.
    public let path: String?
    public let message: String
    public let hint: String?
    /// The source file that made the error (`#fileID`), for reports of bugs, not for people.
    public let file: String
    /// The line of ``file`` that made the error.
    public let line: UInt

    /// An error of any code. Prefer the factories (`LocalGatewayError.cannotListen(path:_:hint:)`…).
    package init(
        _ code: Code,
        path: String?,
        _ message: String,
        hint: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) {
        self.code = code
        self.path = path
        self.message = message
        self.hint = hint
        self.file = file
        self.line = line
    }

    /// The code as JSON reports give it.
    public var reportedCode: ErrorCode { code.errorCode }

    /// `code: description (file:line)`, for logs and test failures.
    public var debugDescription: String { "\(code): \(description) (\(file):\(line))" }

    public var description: String { (path.map { "\($0): " } ?? "") + message + (hint.map { " \($0)" } ?? "") }

    public var subject: ErrorSubject? { path.map(ErrorSubject.file) }
}

extension ErrorCode {
    /// The device registry file is not valid JSON of the expected shape, or lists a bad token.
    public static let invalidRegistry = ErrorCode("invalid_registry")
    /// The gateway's own certificate or key cannot be read.
    public static let invalidIdentity = ErrorCode("invalid_identity")
    /// A client CA file cannot be read as PEM certificates.
    public static let invalidClientCA = ErrorCode("invalid_client_ca")
    /// The delivery log cannot be created.
    public static let logNotWritable = ErrorCode("log_not_writable")
    /// The listening address is taken or not allowed.
    public static let cannotListen = ErrorCode("cannot_listen")
    /// The CA given for minting cannot be read.
    public static let invalidCA = ErrorCode("invalid_ca")
    /// A test identity was asked for without a topic or an environment.
    public static let invalidMintRequest = ErrorCode("invalid_mint_request")
    /// A token key's public key is not a P-256 key in PEM.
    public static let invalidTokenKey = ErrorCode("invalid_token_key")
}

import Foundation
import PushCore

/// Every failure to reach a gateway or to get an answer from it.
///
/// One struct with a code, in the style of swift-nio and ``CredentialError``: callers switch on
/// ``code``; people read ``message`` (what happened) and ``hint`` (what to do). Neither ever
/// contains a private key, a JWT or a password. Hints say what to do in words, never naming a
/// command-line option: a front end maps ``code`` to its own wording. A rejected notification is *not* an error: it
/// is a ``PushResponse`` with a non-200 status.
///
/// Made where it happens, in that place's words, by the initializer with the code
/// (`GatewayError(.tlsUntrusted, message, hint:)`); a code whose wording or kind is always the same has its factory
/// (`GatewayError.connectionRefused(_:)`). Both record where the error was made (``file``, ``line``: in
/// ``debugDescription`` only, never in a message, a report or equality).
public struct GatewayError: ReportableError, CustomStringConvertible, CustomDebugStringConvertible {
    /// A module's codes are ``ErrorCode``s: one string each, the one JSON gives.
    public typealias Code = ErrorCode

    /// What went wrong, as JSON reports give it (each code declared once, as an ``ErrorCode``).
    public let code: Code
    /// What happened, as one sentence.
    public let message: String
    /// What to do about it.
    public private(set) var hint: String?
    /// For ``Code/goAway``: the last stream the server says it processed, and its reason.
    public let goAway: GoAwayInfo?
    /// True when the same notification may be sent again on a new connection: the server
    /// did not process it (GOAWAY above its last stream, REFUSED_STREAM, connection failures
    /// before sending).
    public let isRetryable: Bool
    /// What to do about it, as a value a front end renders (see ``Remedy``).
    public let remedy: Remedy?
    /// The file the error is about (a CA bundle), when there is one: a person reads it before
    /// the message (``statement``).
    public let path: String?
    /// The server the error is about (`host:port`), when the error says which.
    public let server: String?
    /// For a CA file that cannot be used: whether it was added to the trust roots or given in
    /// place of the system's bundle.
    public let trustFile: TrustFile?
    /// For ``ErrorCode/noAddressForFamily``: the one family that was asked for.
    public let family: AddressFamily?
    /// The source file that made the error (`#fileID`), for reports of bugs, not for people.
    public let file: String
    /// The line of ``file`` that made the error.
    public let line: UInt

    /// An error of the code, in the words of the call site. A code with a factory (a fixed
    /// wording, below) is made by that factory.
    package init(
        _ code: Code,
        _ message: String,
        hint: String? = nil,
        goAway: GoAwayInfo? = nil,
        isRetryable: Bool = false,
        remedy: Remedy? = nil,
        path: String? = nil,
        server: String? = nil,
        trustFile: TrustFile? = nil,
        family: AddressFamily? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) {
        self.code = code
        self.message = message
        self.hint = hint
        self.goAway = goAway
        self.isRetryable = isRetryable
        self.remedy = remedy
        self.path = path
        self.server = server
        self.trustFile = trustFile
        self.family = family
        self.file = file
        self.line = line
    }

    /// The file when there is one, else the server.
    public var subject: ErrorSubject? { path.map(ErrorSubject.file) ?? server.map(ErrorSubject.server) }

    /// The same error with another hint.
    public func withHint(_ hint: String?) -> GatewayError {
        var changed = self
        changed.hint = hint
        return changed
    }

    /// A CA file's part in trusting a server.
    public enum TrustFile: Sendable, Hashable {
        /// Certificates added to the trust roots.
        case addedRoots
        /// A bundle used in place of the system's trust store.
        case bundle

        /// How a message names the file.
        var name: String { self == .bundle ? "CA bundle" : "CA file" }
    }

    public var description: String {
        var text = statement
        if let hint { text += "\n  hint: \(hint)" }
        return text
    }

    /// `code: statement [subject] (file:line)`, for logs and test failures.
    public var debugDescription: String {
        var text = "\(code): \(statement)"
        if let server { text += " [\(server)]" }
        if let hint { text += " hint: \(hint)" }
        return text + " (\(file):\(line))"
    }

    /// What GOAWAY said: the last stream the server processed and its reason.
    public struct GoAwayInfo: Codable, Sendable, Equatable {
        public var lastStreamID: Int
        /// HTTP/2 error code name (`NO_ERROR`, `PROTOCOL_ERROR`...).
        public var errorCode: String
        /// The `reason` of the JSON APNs puts in GOAWAY's debug data (`Shutdown`, `IdleTimeout`), if any.
        public var reason: String?

        public init(lastStreamID: Int, errorCode: String, reason: String?) {
            self.lastStreamID = lastStreamID
            self.errorCode = errorCode
            self.reason = reason
        }

        /// "APNs closed the connection: IdleTimeout (GOAWAY)": the reason APNs gave, in its
        /// own word (shown as untrusted text), or the HTTP/2 code when it gave none.
        public var closedConnectionText: String {
            if let reason { return "APNs closed the connection: \(Untrusted.display(reason)) (GOAWAY)" }
            return "APNs closed the connection (GOAWAY \(errorCode))"
        }
    }

    // MARK: The common errors, with their messages and hints in one place.

    public static func dnsFailed(
        host: String,
        detail: String,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        GatewayError(
            .dnsFailed,
            "\(host) does not resolve (\(detail)).",
            hint: "Check the host name and the machine's DNS (for example: getent hosts \(host)).",
            isRetryable: true,
            server: host,
            file: file,
            line: line
        )
    }

    public static func connectionRefused(
        _ address: String,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        GatewayError(
            .connectionRefused,
            "Connection refused by \(address): nothing listens on that port.",
            hint: "Check the port (APNs uses 443 or 2197) and, for a local gateway, that it is running.",
            isRetryable: true,
            server: address,
            file: file,
            line: line
        )
    }

    public static func connectTimeout(
        _ address: String,
        seconds: Double,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        GatewayError(
            .connectTimeout,
            "No TCP connection to \(address) within \(format(seconds)) s.",
            hint: "A firewall may be dropping the packets; try port 2197, which APNs also serves, or an HTTPS proxy.",
            isRetryable: true,
            server: address,
            file: file,
            line: line
        )
    }

    public static func tlsTimeout(
        _ address: String,
        seconds: Double,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        GatewayError(
            .tlsTimeout,
            "The TLS handshake with \(address) did not finish within \(format(seconds)) s: the server accepted the connection but did not answer.",
            hint: "Something other than a TLS server may be listening there, or a middlebox is holding the connection.",
            isRetryable: true,
            server: address,
            file: file,
            line: line
        )
    }

    public static func http2Timeout(
        _ address: String,
        seconds: Double,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        GatewayError(
            .http2Timeout,
            "The server at \(address) finished TLS but sent no HTTP/2 SETTINGS within \(format(seconds)) s.",
            hint: "The server may not speak HTTP/2; APNs always does.",
            isRetryable: true,
            server: address,
            file: file,
            line: line
        )
    }

    public static func alpnRejected(
        _ protocolName: String,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        GatewayError(
            .alpnRejected,
            "The server chose the application protocol \"\(protocolName)\" instead of h2 (HTTP/2).",
            hint: "This is not an APNs endpoint: APNs speaks only HTTP/2.",
            file: file,
            line: line
        )
    }

    public static func connectionClosed(
        _ detail: String,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        GatewayError(
            .connectionClosed,
            "The connection closed \(detail).",
            hint: "APNs closes connections after some errors and when idle; connect again.",
            isRetryable: true,
            file: file,
            line: line
        )
    }

    /// The connection ended after the request was written and before its answer.
    public static func answerLost(
        _ detail: String,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        GatewayError(
            .answerLost,
            "The connection closed \(detail), after the notification was sent and before APNs answered: it may have been delivered.",
            hint: "Check on the device before sending it again; sending again may deliver it twice.",
            isRetryable: false,
            file: file,
            line: line
        )
    }

    public static func requestTimeout(
        seconds: Double,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        GatewayError(
            .requestTimeout,
            "No answer within \(format(seconds)) s.",
            hint: "The notification may or may not have been delivered; APNs normally answers in well under a second.",
            isRetryable: false,
            file: file,
            line: line
        )
    }

    public static func goAway(
        _ info: GoAwayInfo,
        processed: Bool,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        let closed = info.closedConnectionText
        let message =
            processed
            ? "\(closed) after processing this request but before answering."
            : "\(closed); it did not process this request (its last stream was \(info.lastStreamID))."
        return GatewayError(
            .goAway,
            message,
            hint: processed
                ? "Do not resend blindly: the server says it processed it."
                : "Send it again on a new connection.",
            goAway: info,
            isRetryable: !processed,
            file: file,
            line: line
        )
    }

    public static func proxyFailed(
        _ detail: String,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        GatewayError(
            .proxyFailed,
            "The proxy did not open a tunnel: \(detail).",
            hint: "Check the proxy's host, port and credentials, and that it allows CONNECT to port 443 or 2197.",
            file: file,
            line: line
        )
    }

    public static func notConnected(file: String = #fileID, line: UInt = #line) -> GatewayError {
        GatewayError(
            .notConnected,
            "The connection is not open.",
            hint: "Call connect() first, or make a new connection after close().",
            file: file,
            line: line
        )
    }

    static func format(_ seconds: Double) -> String {
        String(format: seconds < 10 ? "%.1f" : "%.0f", seconds)
    }
}

/// A gateway error in a JSON report is its ``ReportedError`` shape (code, statement, hint): the
/// one place a report that holds the typed error turns it into JSON.
extension GatewayError: Encodable {
    public func encode(to encoder: any Encoder) throws { try reported.encode(to: encoder) }
}

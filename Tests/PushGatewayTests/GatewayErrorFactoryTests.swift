import Foundation
import PushCore
import PushGateway
import Testing

/// The factories of ``GatewayError``: code, server or file, hint and retry survive into the JSON
/// shape; where the error was made is recorded but never compared or reported.
struct GatewayErrorFactoryTests {
    static func json(_ error: some ReportableError) throws -> [String: String] {
        let data = try JSONEncoder().encode(error.reported)
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: String])
    }

    @Test func aServerFactoryKeepsTheServer() throws {
        let line: UInt = #line + 1
        let error = GatewayError.connectionRefused("127.0.0.1:2197")
        #expect(error.code == .connectionRefused)
        #expect(error.subject == .server("127.0.0.1:2197"))
        #expect(error.isRetryable)
        #expect(error.file == #fileID)
        #expect(error.line == line)
        // A server is not a file: the message is as it was, not prefixed.
        #expect(
            try Self.json(error)["message"] == "Connection refused by 127.0.0.1:2197: nothing listens on that port."
        )
        #expect(try Self.json(error)["code"] == "connection_refused")
        #expect(error.debugDescription.contains("[127.0.0.1:2197]"))
        #expect(error.debugDescription.hasSuffix("(\(#fileID):\(line))"))
        #expect(
            GatewayError.dnsFailed(host: "api.push.apple.com", detail: "no such host").subject
                == .server("api.push.apple.com")
        )
    }

    @Test func aWordedFactoryKeepsItsWordsHintAndRemedy() throws {
        let line: UInt = #line + 1
        let error = GatewayError(
            .tlsUntrusted,
            "The server's chain is not trusted.",
            hint: "Give its CA.",
            remedy: .teamStoreReviewed
        )
        #expect(error.code == .tlsUntrusted)
        #expect(error.remedy == .teamStoreReviewed)
        #expect(error.line == line)
        #expect(
            try Self.json(error) == [
                "code": "tls_untrusted", "message": "The server's chain is not trusted.", "hint": "Give its CA.",
            ]
        )
        let closed = GatewayError(.connectionClosed, "The server closed the connection.", isRetryable: true)
        #expect(closed.code == .connectionClosed)
        #expect(closed.isRetryable)
        let handshake = GatewayError(.tlsHandshakeFailed, "The handshake failed.", server: "127.0.0.1:443")
        #expect(handshake.subject == .server("127.0.0.1:443"))
        #expect(try Self.json(handshake)["message"] == "The handshake failed.")
    }

    @Test func aFileTooLargeKeepsItsPathAndItsMessage() throws {
        let error = GatewayError(
            .fileTooLarge,
            "The file is larger than 4 MiB.",
            hint: "Give the bundle.",
            path: "ca.pem"
        )
        #expect(error.subject == .file("ca.pem"))
        #expect(error.message == "The file is larger than 4 MiB.")
        // The path comes first, as it did when it was written into the message.
        #expect(try Self.json(error)["message"] == "ca.pem: The file is larger than 4 MiB.")
        #expect(error.description.hasPrefix("ca.pem: The file"))
    }

    @Test func equalityIgnoresWhereButNotTheServer() {
        let here = GatewayError.connectTimeout("127.0.0.1:443", seconds: 5)
        let there = GatewayError(.connectTimeout, "Other words.", server: "127.0.0.1:443", file: "Other.swift", line: 9)
        #expect(here == there)
        #expect(here != GatewayError.connectTimeout("127.0.0.1:2197", seconds: 5))
        #expect(GatewayError.notConnected() == GatewayError.notConnected())
    }

    @Test func anotherHintKeepsTheSubjectAndTheLocation() {
        let line: UInt = #line + 1
        let error = GatewayError.http2Timeout("127.0.0.1:443", seconds: 3).withHint("Check the server.")
        #expect(error.hint == "Check the server.")
        #expect(error.subject == .server("127.0.0.1:443"))
        #expect(error.isRetryable)
        #expect(error.line == line)
    }
}

import Foundation
import PushCore
import Testing

/// An answer's headers are found by name in any ASCII case, and only by the whole name.
struct PushResponseHeaderTests {
    @Test func headersAreFoundInAnyCase() {
        let id = "7f1c3f5a-41e2-4b8a-9d8e-0b6e1d2c3a4f"
        let response = PushResponse(
            status: 429,
            headers: [
                (":status", "429"), ("APNS-ID", id.uppercased()), ("Apns-Unique-Id", "u-1"), ("retry-after", " 7 "),
            ],
            body: Array(#"{"reason":"TooManyRequests"}"#.utf8),
            latency: 0.01
        )
        #expect(response.apnsID == UUID(uuidString: id))
        #expect(response.apnsUniqueID == "u-1")
        #expect(response.retryAfter == 7)
        #expect(response.reason == .tooManyRequests)
    }

    @Test func aLongerOrShorterNameIsAnotherHeader() {
        let response = PushResponse(
            status: 200,
            headers: [
                ("apns-id-extra", "7f1c3f5a-41e2-4b8a-9d8e-0b6e1d2c3a4f"), ("apns-unique", "u-1"), ("retry-afte", "3"),
            ],
            body: [],
            latency: 0
        )
        #expect(response.apnsID == nil && response.apnsUniqueID == nil && response.retryAfter == nil)
    }

    /// Only letters fold: a byte that differs from the name's by the case bit but is not a
    /// letter ("\r" is "-" without it, "\u{7F}" is "_" with it) is another name.
    @Test func onlyLettersAreFoldedToLowerCase() {
        let id = "7f1c3f5a-41e2-4b8a-9d8e-0b6e1d2c3a4f"
        let response = PushResponse(
            status: 200,
            headers: [("APNS\rID", id), ("retry\rafter", "3"), ("apns-unique\u{7F}id", "u-1")],
            body: [],
            latency: 0
        )
        #expect(response.apnsID == nil && response.retryAfter == nil && response.apnsUniqueID == nil)
        let channel = ChannelResponse(status: 200, headers: [("APNS-Request-ID", id)], body: [], latency: 0)
        #expect(channel.requestID == id)
    }
}

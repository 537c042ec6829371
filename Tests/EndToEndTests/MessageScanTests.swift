import Foundation
import TestSupport
import Testing

/// The scan every apnsctl run of the suite goes through (see `CLI.internals(in:)`) catches what
/// users were shown before, and lets plain words through.
struct MessageScanTests {
    @Test(arguments: [
        "error: SwiftASN1/ASN1.swift:139: Fatal error",
        "error: keyNotFound(CodingKeys(stringValue: \"reason\", intValue: nil))",
        "error: The operation could not be completed. (NIOSSL.NIOSSLError error 6.)",
        "error: Optional(\"x\")",
        "error: unreadable [48, 130, 10, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]",
        "error: " + String(repeating: "3082", count: 100),
    ])
    func internalsAreFound(_ message: String) {
        #expect(!CLI.internals(in: message).isEmpty)
    }

    @Test func plainWordsPass() {
        let message = """
            error: /tmp/push.p12: Wrong password, or the file is damaged (its integrity check failed).
              hint: Type the password again; install Swift. Token 740f4707bebcf74f9b7c25d48e3358945f6aa01da5ddb387462c7eaf61bb78ad.
            """
        #expect(CLI.internals(in: message).isEmpty)
    }
}

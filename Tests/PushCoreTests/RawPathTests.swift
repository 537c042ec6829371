import Foundation
import Testing

@testable import PushCore

/// A path that is not UTF-8 reaches a command as a String with U+FFFD in it; its bytes are the
/// argument's it was decoded from, as the front end gave them.
@Suite struct RawPathTests {
    /// "café.p12" in Latin-1: the é is the single byte E9.
    static let latin1: [UInt8] = Array("caf".utf8) + [0xE9] + Array(".p12".utf8)
    static let decoded = String(decoding: latin1, as: UTF8.self)

    @Test func aRepairedPathIsTheBytesOfTheArgumentItCameFrom() {
        #expect(Self.decoded.unicodeScalars.contains("\u{FFFD}"))
        let arguments = [Array("apnsctl".utf8), Array("inspect".utf8), Self.latin1]
        #expect(RawPath.bytes(Self.decoded, arguments: arguments) == Self.latin1)
    }

    @Test func theValueOfAnOptionWithEqualsIsMatchedToo() {
        let arguments = [Array("check".utf8), Array("--password-file=".utf8) + Self.latin1]
        #expect(RawPath.bytes(Self.decoded, arguments: arguments) == Self.latin1)
    }

    @Test func aUTF8PathIsItsOwnBytesAndAnUnknownOneStaysAsGiven() {
        #expect(RawPath.bytes("café.p12", arguments: [Self.latin1]) == Array("café.p12".utf8))
        #expect(RawPath.bytes(Self.decoded, arguments: []) == Array(Self.decoded.utf8))
    }

    @Test func theArgumentsAreTheFrontEndsToGive() {
        RawPath.use(arguments: [Self.latin1])
        #expect(RawPath.bytes(Self.decoded) == Self.latin1)
    }
}

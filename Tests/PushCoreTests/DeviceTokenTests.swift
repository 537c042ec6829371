import Foundation
import PushCore
import Testing

/// Device tokens in every form people paste them, and clear errors for the rest.
struct DeviceTokenTests {
    static let hex = "740f4707bebcf74f9b7c25d48e3358945f6aa01da5ddb387462c7eaf61bb78ad"

    @Test(arguments: [
        hex,
        hex.uppercased(),
        "<740f4707 bebcf74f 9b7c25d4 8e335894 5f6aa01d a5ddb387 462c7eaf 61bb78ad>",
        "  740f4707 bebcf74f 9b7c25d4 8e335894 5f6aa01d a5ddb387 462c7eaf 61bb78ad \n",
        "<740F4707BEBCF74F9B7C25D48E3358945F6AA01DA5DDB387462C7EAF61BB78AD>",
    ])
    func pastedFormsParseToTheSameToken(_ text: String) throws {
        let token = try DeviceToken(text)
        #expect(token.hex == Self.hex)
        #expect(token.bytes.count == 32)
        #expect(token.description == Self.hex)
    }

    @Test func lengthsFromOneToAHundredBytesAreAccepted() throws {
        #expect(try DeviceToken("ab").bytes == [0xAB])
        #expect(try DeviceToken(String(repeating: "0f", count: 100)).bytes.count == 100)
    }

    @Test func oddLengthSaysHowManyDigits() {
        let error = #expect(throws: PushCoreError.self) { try DeviceToken(String(Self.hex.dropLast())) }
        #expect(error?.code == .invalidDeviceToken)
        #expect(error?.message.contains("63 hex digits") == true)
        #expect(error?.message.contains("even number") == true)
    }

    @Test func nonHexSaysWhichCharacterAndWhere() {
        let error = #expect(throws: PushCoreError.self) { try DeviceToken("740fg707") }
        #expect(error?.message.contains("'g' at position 5") == true)
    }

    @Test(arguments: ["", "   ", "<>", String(repeating: "ab", count: 101), "74 0f <47>", "0x740f"])
    func otherBadInputIsAnError(_ text: String) {
        #expect(throws: PushCoreError.self) { try DeviceToken(text) }
    }

    /// The fast reader for token files: the same bytes whether the text is contiguous (an array
    /// slice, as token files give it) or not, and nil for anything but plain hex of even length.
    @Test func plainHexReadsContiguousAndOtherCollections() {
        let expected = try? DeviceToken(Self.hex).bytes
        let upper = Array(Self.hex.uppercased().utf8)
        #expect(DeviceToken(plainHex: Array(Self.hex.utf8)[...])?.bytes == expected)
        #expect(DeviceToken(plainHex: upper)?.bytes == expected)
        #expect(DeviceToken(plainHex: Self.hex.utf8)?.bytes == expected)
        // Not contiguous: read from the reversed text reversed back.
        #expect(DeviceToken(plainHex: Array(Self.hex.utf8.reversed()).reversed())?.bytes == expected)
        for text in ["", "abc", "740fg707", "<740f>", "74 0f", String(repeating: "ab", count: 101)] {
            #expect(DeviceToken(plainHex: Array(text.utf8)) == nil, "\(text)")
        }
    }

    @Test func codableAsHexString() throws {
        let token = try DeviceToken(Self.hex.uppercased())
        let data = try JSONEncoder().encode([token])
        #expect(String(decoding: data, as: UTF8.self) == "[\"\(Self.hex)\"]")
        #expect(try JSONDecoder().decode([DeviceToken].self, from: data) == [token])
    }
}

@Suite struct UserFacingTests {
    @Test func libraryDetailsBecomeWords() {
        #expect(
            UserFacing.sanitize(
                "sslError([Error: 268435581 error:1000007d:SSL routines:OPENSSL_internal:CERTIFICATE_VERIFY_FAILED])"
            )
                == "certificate verify failed"
        )
        let located = UserFacing.sanitize("ASN1Error.invalidASN1Object: Too few bytes SwiftASN1/ASN1.swift:139")
        #expect(!located.contains(".swift") && !located.contains("ASN1Error"))
        #expect(located.contains("Too few bytes"))
        let dump = UserFacing.sanitize("bad value [48, 130, 1, 10, 2, 130, 1, 1, 0, 171, 205, 239]")
        #expect(!dump.contains("48, 130"))
        struct Shape: Decodable { var topic: String }
        let decoding = Result { try JSONDecoder().decode(Shape.self, from: Data("{}".utf8)) }
        if case .failure(let error) = decoding {
            #expect(UserFacing.describe(error) == "\"topic\" is missing")
        } else {
            Issue.record("decoding {} must fail")
        }
    }
}

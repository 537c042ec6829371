import Crypto
import Foundation
import Testing

@testable import PushCore

@Suite struct Base64URLTests {
    /// Foundation's base64 with the URL alphabet's two letters swapped in and the padding
    /// dropped: RFC 4648 section 5 as RFC 7515 uses it.
    static func reference(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    @Test func everyLengthAndEveryByteValueEncodesAsFoundationDoes() {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<70 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(Base64URL.encode(bytes) == Self.reference(bytes), "length \(length)")
            #expect(Data(base64URLEncoded: Base64URL.encode(bytes)) == Data(bytes))
        }
        let every = (0...255).map(UInt8.init)
        #expect(Base64URL.encode(every) == Self.reference(every))
        #expect(Base64URL.encode(every).allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
    }

    @Test func aProviderTokenIsThreeBase64URLPartsWhoseSignatureVerifies() throws {
        let key = try ProviderKey(keyID: "ABC123DEFG", teamID: "TEAM123456", privateKey: .init())
        let token = try key.makeJWT(issuedAt: Date(timeIntervalSince1970: 1_795_839_113))
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        #expect(parts.count == 3)
        let header = try #require(Data(base64URLEncoded: parts[0]))
        let claims = try #require(Data(base64URLEncoded: parts[1]))
        #expect(String(decoding: header, as: UTF8.self) == #"{"alg":"ES256","kid":"ABC123DEFG"}"#)
        #expect(String(decoding: claims, as: UTF8.self) == #"{"iat":1795839113,"iss":"TEAM123456"}"#)
        let raw = try #require(Data(base64URLEncoded: parts[2]))
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: raw)
        #expect(key.privateKey.publicKey.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8)))
        #expect(!key.privateKey.publicKey.isValidSignature(signature, for: Data((parts[0] + "." + parts[0]).utf8)))
    }
}

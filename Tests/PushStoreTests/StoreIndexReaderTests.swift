import CredentialFormats
import Foundation
import PushCore
import Testing

@testable import PushStore

/// The index reader against `JSONDecoder`: for every index apnsctl writes they give the same
/// credentials; anything else the reader leaves to the decoder, whose verdict (and error) stands.
@Suite struct StoreIndexReaderTests {
    static func sample() -> StoreIndex {
        var index = StoreIndex()
        index.credentials = [
            StoredCredential(
                alias: "shop",
                kind: .certificate,
                topics: ["com.example.shop", "com.example.shop.voip"],
                environments: [.sandbox, .production],
                importedAt: Date(timeIntervalSince1970: 1_795_839_113),
                source: "Certificates (2).p12",
                secret: .pkcs12Password,
                bundleFile: "credentials/shop.1a2b.p12",
                certificateFile: "credentials/shop.1a2b.cert.pem",
                sha256: "AB:CD:EF",
                subject:
                    "UID=com.example.shop, CN=Apple Push Services: com.example.shop, OU=ABCDE12345, O=Équipe \"Shop\", C=FR",
                teamID: "ABCDE12345",
                notBefore: Date(timeIntervalSince1970: 1_764_000_000),
                notAfter: Date(timeIntervalSince1970: 1_795_536_000)
            ),
            StoredCredential(
                alias: "news/key\\1",
                kind: .tokenKey,
                topics: [],
                environments: [.production],
                importedAt: Date(timeIntervalSince1970: 1_700_000_000),
                source: nil,
                secret: .tokenKey,
                keyID: "ABC123DEFG",
                publicKeyFingerprint: "SHA256:xyz\u{1}"
            ),
        ]
        index.requests = [
            PendingRequest(
                alias: "request-0a1b2c3d4e5f",
                publicKeyFingerprint: "0A:1B",
                subject: "CN=日本, emailAddress=ops@example.com",
                keyType: "RSA 2048",
                requestedAt: Date(timeIntervalSince1970: 1_790_000_000),
                requestFile: nil,
                aliasChosen: false
            )
        ]
        return index
    }

    static func encoded(_ index: StoreIndex) throws -> [UInt8] {
        Array(try ReportSchema.encoder().encode(index))
    }

    static func viaDecoder(_ bytes: [UInt8]) throws -> StoreIndex {
        try ReportSchema.decoder().decode(StoreIndex.self, from: Data(bytes))
    }

    @Test func anIndexAsWrittenReadsAsTheDecoderReadsIt() throws {
        for index in [Self.sample(), StoreIndex()] {
            let bytes = try Self.encoded(index)
            let read = try #require(StoreIndexReader.decode(bytes), "the reader takes what the encoder writes")
            let decoded = try Self.viaDecoder(bytes)
            #expect(read.credentials == decoded.credentials)
            #expect(read.requests == decoded.requests)
            #expect(read.schemaVersion == decoded.schemaVersion)
        }
        // What was written comes back, escapes and all.
        let read = try #require(StoreIndexReader.decode(try Self.encoded(Self.sample())))
        #expect(read.credentials == Self.sample().credentials)
        #expect(read.requests == Self.sample().requests)
    }

    @Test func compactAndEscapedFormsReadTheSame() throws {
        let text =
            #"{"schema_version":1,"credentials":[{"alias":"a\u00e9\ud83d\ude00\/\"","kind":"token_key","#
            + #""topics":["t"],"environments":["sandbox"],"imported_at":"2026-11-28T06:33:47Z","secret":"token-key","#
            + #""key_id":null}]}"#
        let bytes = Array(text.utf8)
        let read = try #require(StoreIndexReader.decode(bytes))
        #expect(read.credentials == (try Self.viaDecoder(bytes)).credentials)
        #expect(read.credentials.first?.alias == "aé😀/\"")
        #expect(read.requests == nil)
    }

    /// Each of these the reader declines; `StoreIndexReader.index` then gives the decoder's
    /// answer: an error for the damaged ones, the decoder's reading for the one it takes.
    @Test(arguments: [
        #"{"schema_version":1,"credentials":[{"alias":"a","kind":"token_key","topics":[],"environments":[],"#
            + #""imported_at":"2026-11-28T06:33:47Z","secret":"token-key","teamId":"ABCDE12345"}]}"#,
        #"{"schema_version":1,"credentials":[{"alias":"a","kind":"passkey","topics":[],"environments":[],"#
            + #""imported_at":"2026-11-28T06:33:47Z","secret":"token-key"}]}"#,
        #"{"schema_version":1,"credentials":[{"alias":"a","kind":"token_key","topics":[],"environments":[],"#
            + #""imported_at":"yesterday","secret":"token-key"}]}"#,
        #"{"schema_version":1,"credentials":[{"alias":7,"kind":"token_key","topics":[],"environments":[],"#
            + #""imported_at":"2026-11-28T06:33:47Z","secret":"token-key"}]}"#,
        #"{"schema_version":1,"credentials":[{"kind":"token_key","topics":[],"environments":[],"#
            + #""imported_at":"2026-11-28T06:33:47Z","secret":"token-key"}]}"#,
        #"{"schema_version":1,"schema_version":2,"credentials":[]}"#,
        #"{"schema_version":1.5,"credentials":[]}"#,
        #"{"schema_version":1,"credentials":[]} trailing"#,
        #"{"schema_version":1,"credentials":[],}"#,
        #"{"schema_version":1,"credentials":["#,
        "",
        "\u{FEFF}{}",
    ])
    func whatTheReaderDeclinesTheDecoderDecides(text: String) throws {
        let bytes = Array(text.utf8)
        #expect(StoreIndexReader.decode(bytes) == nil)
        let viaDecoder = Result { try Self.viaDecoder(bytes) }
        let viaReader = Result { try StoreIndexReader.index(bytes) }
        switch (viaDecoder, viaReader) {
        case (.success(let expected), .success(let got)):
            #expect(got.credentials == expected.credentials)
        case (.failure(let expected), .failure(let got)):
            #expect(String(describing: got) == String(describing: expected))
        default:
            Issue.record("the reader's fallback and the decoder disagree on \(text)")
        }
    }

    @Test func invalidUTF8AndControlCharactersAreDeclined() {
        var bytes = Array(#"{"schema_version":1,"credentials":[{"alias":""#.utf8)
        bytes += [0xC3, 0x28]  // not UTF-8
        bytes += Array(
            #"","kind":"token_key","topics":[],"environments":[],"imported_at":"2026-11-28T06:33:47Z","secret":"token-key"}]}"#
                .utf8
        )
        #expect(StoreIndexReader.decode(bytes) == nil)
        let control = Array("{\"schema_version\":1,\"credentials\":[],\"requests\":[{\"alias\":\"a\u{1}\"}]}".utf8)
        #expect(StoreIndexReader.decode(control) == nil)
        let deep = Array((String(repeating: "[", count: 40) + String(repeating: "]", count: 40)).utf8)
        #expect(StoreIndexReader.decode(deep) == nil)
    }
}

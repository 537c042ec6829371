import Crypto
import Foundation
import NIOConcurrencyHelpers
import PushCore
import Testing

@testable import PushVault

/// A shared provider token is used only once verified: an entry any role may have written is
/// never sent unless the key signed it for this team, recently. Against a real OpenBao dev server.
@Suite(
    "Shared provider token, verified",
    .enabled(if: BaoDevServer.isAvailable, Comment(rawValue: BaoDevServer.missingMessage)),
    .baoDevServer,
    .timeLimit(.minutes(2))
)
struct SharedTokenVerificationTests {
    typealias Fixture = SharedProviderTokenTests.Fixture

    /// What an instance warned about.
    final class Warnings: Sendable {
        let said = NIOLockedValueBox<[String]>([])
        var all: [String] { said.withLockedValue { $0 } }
        var sink: @Sendable (String) -> Void { { [self] text in said.withLockedValue { $0.append(text) } } }
    }

    /// A token with a sending role's policy: `tokens` on the shared token entries, and signing
    /// with the key in Transit.
    static func sendingRole(
        _ name: String,
        tokens: [String],
        _ fixture: Fixture,
        _ server: BaoDevServer
    ) async throws -> String {
        let capabilities = tokens.map { "\"\($0)\"" }.joined(separator: ", ")
        return try await server.token(
            policy: "\(name)-\(fixture.prefix)",
            hcl: """
                path "secret/data/\(fixture.prefix)/tokens/*" { capabilities = [\(capabilities)] }
                path "transit/keys/apns-*" { capabilities = ["read"] }
                path "transit/sign/apns-*" { capabilities = ["update"] }
                path "sys/internal/ui/mounts/secret" { capabilities = ["read"] }
                """
        )
    }

    static func entryPath(_ fixture: Fixture) -> String { "\(fixture.prefix)/tokens/\(fixture.keyID)" }

    /// The suite's server, a fixture of its own on it, a root KV client and the fixture's token
    /// entry.
    static func setUp() async throws -> (BaoDevServer, Fixture, KVv2, String) {
        let server = try server()
        let fixture = try await Fixture(server: server)
        return (server, fixture, try server.rootClient().kv(), entryPath(fixture))
    }

    /// The tokens someone with write access to `tokens/` may leave there, each with the words
    /// its warning must hold.
    static func bad(_ fixture: Fixture) throws -> [(name: String, data: [String: String], reason: String)] {
        let now = fixture.clock.now.withLockedValue { $0 }
        let seconds = Int(now.timeIntervalSince1970)
        let real = try ProviderKey(keyID: fixture.keyID, teamID: fixture.teamID, privateKey: fixture.key)
        let foreign = try ProviderKey(
            keyID: fixture.keyID,
            teamID: fixture.teamID,
            privateKey: P256.Signing.PrivateKey()
        )
        let valid = try real.makeJWT(issuedAt: now)
        let forged =
            valid.split(separator: ".").prefix(2).joined(separator: ".") + "."
            + Data(repeating: 0x41, count: 64).base64URLEncodedString()
        let expired = try real.makeJWT(issuedAt: now.addingTimeInterval(-2 * 3_600))
        let future = try real.makeJWT(issuedAt: now.addingTimeInterval(3_600))
        let otherTeam = try ProviderKey(keyID: fixture.keyID, teamID: "OTHER12345", privateKey: fixture.key)
        return [
            ("forged", ["token": forged, "iat": String(seconds), "key_id": fixture.keyID], "signature"),
            ("garbage", ["token": "eyJhbGciOi.AAAA", "iat": String(seconds), "key_id": fixture.keyID], "not a JWT"),
            // Signed long ago, its iat field rewritten to now so that it would look fresh.
            ("expired", ["token": expired, "iat": String(seconds), "key_id": fixture.keyID], "iat field"),
            ("future", ["token": future, "iat": String(seconds + 3_600), "key_id": fixture.keyID], "in the future"),
            (
                "foreign key",
                ["token": try foreign.makeJWT(issuedAt: now), "iat": String(seconds), "key_id": fixture.keyID],
                "signature"
            ),
            (
                "other team",
                ["token": try otherTeam.makeJWT(issuedAt: now), "iat": String(seconds), "key_id": fixture.keyID], "team"
            ),
        ]
    }

    @Test(
        "A forged, expired, future, foreign-key or other-team token is replaced by a writer, with a warning naming it"
    )
    func badTokensAreReplaced() async throws {
        let (server, fixture, kv, path) = try await Self.setUp()
        for bad in try Self.bad(fixture) {
            let current = try await kv.latest(path).version
            let planted = try await kv.write(path, data: bad.data, cas: current)
            let warnings = Warnings()
            let token = try await fixture.instance(server, warn: warnings.sink).token()
            #expect(token.minted, "\(bad.name)")
            #expect(token.token != bad.data["token"], "\(bad.name) was used")
            #expect(token.version == planted + 1, "\(bad.name): replaced with check-and-set")
            try fixture.verify(token)
            #expect(warnings.all.count == 1, "\(bad.name): \(warnings.all)")
            let warning = warnings.all.first ?? ""
            #expect(warning.contains("secret/\(path) (version \(planted))"), "\(warning)")
            #expect(warning.contains(bad.reason), "\(bad.name): \(warning)")
            #expect(!warning.contains(bad.data["token"] ?? "-"), "a token never appears in a warning")
            #expect(try await kv.read(path).data["token"] == token.token)
        }
    }

    @Test("A role that may not write tokens/ sends with a token of its own, once, and warns; the entry is untouched")
    func readOnlyRoleBypasses() async throws {
        let (server, fixture, kv, path) = try await Self.setUp()
        let bad = try #require(try Self.bad(fixture).first)
        let planted = try await kv.write(path, data: bad.data, cas: 0)
        let exporter = try await Self.sendingRole("exporter", tokens: ["read"], fixture, server)
        let warnings = Warnings()
        let instance = try fixture.instance(server, client: try server.client(token: exporter), warn: warnings.sink)
        let own = try await instance.token()
        #expect(own.minted)
        #expect(own.token != bad.data["token"])
        try fixture.verify(own)
        let again = try await instance.token()
        #expect(again.token == own.token, "its own token is kept for the refresh age, not signed anew")
        #expect(try await kv.read(path).version == planted, "the entry was not written")
        #expect(warnings.all.contains { $0.contains("signature") && $0.contains("secret/\(path)") }, "\(warnings.all)")
        #expect(
            warnings.all.contains { $0.contains("may not replace") && $0.contains("secret/\(path)") },
            "\(warnings.all)"
        )
        #expect(warnings.all.count == 2, "one warning per entry version and one per token of its own: \(warnings.all)")

        // Another bad version while it holds a fresh token: kept, and the warning does not
        // claim a write it may not make.
        let replanted = try await kv.write(path, data: bad.data, cas: planted)
        #expect(try await instance.token().token == own.token)
        #expect(try await kv.read(path).version == replanted, "the entry was not written")
        #expect(warnings.all.count == 3, "\(warnings.all)")
        #expect(warnings.all.last?.contains("do not let it write the entry") == true, "\(warnings.all)")

        // A role that mints puts a valid token there: the exporter keeps its own while it is
        // fresh (a switch costs one of APNs' token changes), and takes the shared one after.
        fixture.clock.advance(minutes: 1)
        let minted = try await fixture.instance(server).token()
        #expect(minted.minted)
        #expect(try await instance.token().token == own.token)
        fixture.clock.advance(minutes: 40)
        let renewed = try await fixture.instance(server).token()
        #expect(renewed.minted)
        #expect(try await instance.token().token == renewed.token)
        #expect(try await kv.read(path).data["token"] == renewed.token)
    }

    @Test("A token entry deleted (soft), destroyed or removed whole is written again by a reader's role")
    func deletedEntryIsRecreated() async throws {
        let (server, fixture, root, path) = try await Self.setUp()
        // The reader's capabilities on tokens/ as docs/vault-policies/reader.hcl gives them: no
        // metadata, so the version to replace comes from the data path alone.
        let reader = try await Self.sendingRole("minter", tokens: ["read", "create", "update"], fixture, server)
        let instance = try fixture.instance(server, client: try server.client(token: reader))
        let first = try await instance.token()
        #expect(first.minted)

        // While its token is fresh, the process writes that one back rather than a new one.
        try await root.delete(path)
        let afterDelete = try await instance.token()
        #expect(!afterDelete.minted, "the deleted version is replaced by the token it holds")
        #expect(afterDelete.token == first.token)
        #expect(afterDelete.version == first.version + 1)
        #expect(try await root.read(path).data["token"] == first.token)

        try await root.destroy(path, versions: [afterDelete.version])
        let afterDestroy = try await instance.token()
        #expect(afterDestroy.token == first.token)
        #expect(afterDestroy.version == afterDelete.version + 1)

        fixture.clock.advance(minutes: 41)
        try await root.destroyAll(path)
        let afterRemoval = try await instance.token()
        #expect(afterRemoval.minted, "its token is old: a new one")
        #expect(afterRemoval.version == 1)
        try fixture.verify(afterRemoval)
        #expect(try await root.read(path).data["token"] == afterRemoval.token)
    }

    /// A token of this key signed through Transit, as any role that may sign can make one.
    static func transitToken(
        _ fixture: Fixture,
        _ server: BaoDevServer,
        issuedAt: Date
    ) async throws -> [String: String] {
        let token = try await server.rootClient().transit().makeProviderToken(
            name: Transit.keyName(for: fixture.keyID),
            keyID: fixture.keyID,
            teamID: fixture.teamID,
            issuedAt: issuedAt
        )
        return ["token": token, "iat": String(Int(issuedAt.timeIntervalSince1970)), "key_id": fixture.keyID]
    }

    /// A process that sends with the reader's policies (tokens/ writable) and holds a token it minted.
    static func readerHolding(
        _ fixture: Fixture,
        _ server: BaoDevServer,
        _ warnings: Warnings
    ) async throws -> (
        SharedProviderToken, SharedToken
    ) {
        let reader = try await Self.sendingRole("churn", tokens: ["read", "create", "update"], fixture, server)
        let instance = try fixture.instance(server, client: try server.client(token: reader), warn: warnings.sink)
        let held = try await instance.token()
        #expect(held.minted)
        return (instance, held)
    }

    @Test("A forged token written every minute over a fresh one: the process keeps its token and writes it back")
    func forgedChurnIsUndone() async throws {
        let (server, fixture, kv, path) = try await Self.setUp()
        let warnings = Warnings()
        let (instance, held) = try await Self.readerHolding(fixture, server, warnings)
        for minute in 1...3 {
            fixture.clock.advance(minutes: 1)
            let forged = try #require(try Self.bad(fixture).first { $0.name == "forged" })
            let planted = try await kv.write(path, data: forged.data, cas: try await kv.latest(path).version)
            let sent = try await instance.currentToken()
            #expect(sent.jwt == held.token, "minute \(minute): the same JWT is sent")
            let entry = try await kv.read(path)
            #expect(entry.data["token"] == held.token, "minute \(minute): the entry holds its token again")
            #expect(entry.data["iat"] == String(Int(held.issuedAt.timeIntervalSince1970)))
            #expect(entry.version == planted + 1, "written back with check-and-set")
        }
        #expect(warnings.all.count == 3, "one warning per forged version: \(warnings.all)")
        #expect(
            warnings.all.allSatisfy { $0.contains("signature") && $0.contains("writes it back") },
            "\(warnings.all)"
        )
        #expect(!warnings.all.contains { $0.contains(held.token) })

        // A second process (none held) takes the restored token: the fleet keeps one token.
        let other = try await fixture.instance(server).token()
        #expect(other.token == held.token && !other.minted)
    }

    @Test("A valid token signed through Transit written over a fresh one: the process keeps its own, the entry is left")
    func validChurnIsIgnored() async throws {
        let (server, fixture, kv, path) = try await Self.setUp()
        let warnings = Warnings()
        let (instance, held) = try await Self.readerHolding(fixture, server, warnings)
        var planted: [String: String] = [:]
        for minute in 1...3 {
            fixture.clock.advance(minutes: 1)
            planted = try await Self.transitToken(fixture, server, issuedAt: fixture.clock.now.withLockedValue { $0 })
            let version = try await kv.write(path, data: planted, cas: try await kv.latest(path).version)
            let sent = try await instance.currentToken()
            #expect(sent.jwt == held.token, "minute \(minute): the same JWT is sent")
            #expect(try await kv.read(path).version == version, "a valid entry is not rewritten")
        }
        #expect(warnings.all.isEmpty, "\(warnings.all)")
        // A process that holds none takes the entry's valid token.
        let newcomer = try await fixture.instance(server).token()
        #expect(newcomer.token == planted["token"] && !newcomer.minted)

        // Once its own is old, a valid token dated back to soon after it (to make the process
        // switch again within minutes) is not taken: a new one is minted in its place.
        fixture.clock.advance(minutes: 38)
        let backdated = try await Self.transitToken(
            fixture,
            server,
            issuedAt: held.issuedAt.addingTimeInterval(10 * 60)
        )
        let version = try await kv.write(path, data: backdated, cas: try await kv.latest(path).version)
        let next = try await instance.token()
        #expect(next.minted, "not the token dated 10 minutes after its own")
        #expect(next.token != backdated["token"] && next.token != held.token)
        #expect(next.version == version + 1)
        try fixture.verify(next)
        #expect(try await kv.read(path).data["token"] == next.token)
    }
}

import CredentialFormats
import Foundation
import PushStore

/// `team.json` at the top of a team store: who the secrets are encrypted to. Public: names and
/// age recipients only.
public struct TeamFile: Codable, Sendable, Equatable {
    public struct Member: Codable, Sendable, Equatable {
        public var name: String
        /// An age recipient (`age1…`) or an `ssh-ed25519` public key line.
        public var recipient: String
        /// The key this member signs membership changes with; none for members that only read (CI).
        public var signingKey: SigningPublicKey?
        public var addedAt: Date
        public var addedBy: String?

        public init(
            name: String,
            recipient: String,
            signingKey: SigningPublicKey? = nil,
            addedAt: Date = Date(),
            addedBy: String? = nil
        ) {
            self.name = name
            self.recipient = recipient
            self.signingKey = signingKey
            self.addedAt = addedAt
            self.addedBy = addedBy
        }
    }

    public var schemaVersion = 2
    /// Names this team's identities in each member's Secret Service, whatever folder the clone is in.
    public var teamID: String
    /// Counts the signed member lists: each change signs a higher one, so that an old list
    /// signed by a member who was later removed cannot be pushed back (none before schema 2).
    public var version: Int?
    public var members: [Member]

    // `team_id` on disk: see ReportSchema for the acronym's raw value.
    enum CodingKeys: String, CodingKey {
        case schemaVersion
        case teamID = "teamId"
        case version
        case members
    }

    public init(teamID: String, version: Int? = 1, members: [Member]) {
        self.teamID = teamID
        self.version = version
        self.members = members
    }

    static let fileName = "team.json"
    /// The member list's SSHSIG signature (`ssh-keygen -Y verify -n apnsctl-team` checks it).
    static let signatureFileName = "team.json.sig"
    /// The SSHSIG namespace of member-list signatures.
    public static let signatureNamespace = "apnsctl-team"

    public var recipients: [String] { members.map(\.recipient) }

    /// The member of that name, compared without regard to case (`Carol` is `carol`).
    public func member(named name: String) -> Member? { members.first { Self.sameName($0.name, name) } }

    /// Whether two member names are the same name: names are ASCII (see ``validateName(_:)``), so
    /// comparing them case-insensitively leaves no two that look alike.
    static func sameName(_ one: String, _ other: String) -> Bool { one.lowercased() == other.lowercased() }

    /// The member whose signing key is `key`.
    public func member(signingWith key: SigningPublicKey) -> Member? { members.first { $0.signingKey == key } }

    static func read(root: URL) throws -> TeamFile {
        do {
            return try decode(try StoreFile.read(root: root, relative: fileName, kind: .storeRecord))
        } catch let error as CredentialError where error.code == .tampered {
            throw error
        } catch {
            throw CredentialError(
                .teamError,
                path: root.appendingPathComponent(fileName).path,
                "The team's member list cannot be read (\(UserFacing.describe(error))).",
                hint: "Restore it from the repository's history (git checkout -- team.json) and sync again."
            )
        }
    }

    static func decode(_ bytes: [UInt8]) throws -> TeamFile {
        let team = try ReportSchema.decoder().decode(TeamFile.self, from: Data(bytes))
        guard Self.isValidTeamID(team.teamID) else {
            throw CredentialError(
                .teamError,
                path: fileName,
                "The team's ID is not one apnsctl makes (letters, digits and '-', up to 64).",
                hint: "Restore team.json from the repository's history (git checkout -- team.json)."
            )
        }
        return team
    }

    static func isValidTeamID(_ id: String) -> Bool {
        !id.isEmpty && id.count <= 64 && id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
    }

    static func isTeamStore(root: URL) -> Bool {
        var status = stat()
        return lstat(root.appendingPathComponent(fileName).path, &status) == 0
    }

    /// The bytes written for this list: what a signature covers.
    func encoded() throws -> [UInt8] { [UInt8](try ReportSchema.encoder().encode(self)) }

    /// Member names are ASCII letters, digits, '.', '-', '_' and '@', up to 64, compared without
    /// regard to case: no name can be another's look-alike (a Cyrillic о for an o, `Carol` for `carol`).
    static func validateName(_ name: String) throws {
        guard !name.isEmpty, name.utf8.count <= 64,
            name.unicodeScalars.allSatisfy({
                $0.isASCII && (isASCIIAlphanumeric($0) || "._-@".unicodeScalars.contains($0))
            })
        else {
            throw CredentialError(
                .invalidArgument,
                path: nil,
                "The member name \"\(name)\" may use only ASCII letters, digits, '.', '-', '_' and '@' (up to 64).",
                hint: "For example alice or ci-deploy."
            )
        }
    }

    private static func isASCIIAlphanumeric(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
    }

    /// What makes this list unusable as a member list, in words; empty when it is usable. Every
    /// rule applies to every member: what `team add`, `team join` and a first list must meet.
    public var problems: [String] { problems(carriedFrom: nil) }

    /// `age1` and 58 bech32 characters, or an `ssh-ed25519` public key line: the forms a team takes
    /// (age also takes `ssh-rsa`; a team store does not, as docs/team.md says).
    static func isRecipient(_ text: String) -> Bool {
        let bech32 = Set("qpzry9x8gf2tvdw0s3jn54khce6mua7l")
        if text.hasPrefix("age1") {
            return text.count == 62 && text.dropFirst(4).allSatisfy { bech32.contains($0) }
        }
        let words = text.split(separator: " ")
        guard words.count >= 2, words[0] == "ssh-ed25519",
            let blob = Data(base64Encoded: String(words[1]))
        else { return false }
        var reader = SSHReader([UInt8](blob))
        return reader.string() == Array(words[0].utf8)
    }
}

/// Where this process finds the member's age identity.
public enum TeamIdentity: Sendable {
    /// `APNSCTL_IDENTITY` (CI and servers).
    case environment(SecretBytes)
    /// `--identity FILE`: an age identity file, or an ssh private key age accepts.
    case file(String)
    /// The identity `team init`/`join` made, kept in the Secret Service.
    case secretService(SecretItem)
    /// None is known: metadata only.
    case none

    public static let environmentVariable = "APNSCTL_IDENTITY"

    /// The Secret Service item of a member's identity: its `store` attribute names the team, not a
    /// folder, so that it never shows as a credential secret without an index entry.
    static func item(teamID: String, member: String, recipient: String) -> SecretItem {
        SecretItem(store: "team:\(teamID)", alias: "identity-\(member)", kind: .teamIdentity, identifier: recipient)
    }

    /// The item versions before 0.2 kept the identity in: base64 of the line, as a private key.
    static func legacyItem(of item: SecretItem) -> SecretItem {
        SecretItem(store: item.store, alias: item.alias, kind: .privateKey, identifier: item.identifier)
    }

    /// The Secret Service item of a member's signing key (an OpenSSH private key file's text).
    static func signingItem(teamID: String, member: String, fingerprint: String) -> SecretItem {
        SecretItem(store: "team:\(teamID)", alias: "signing-\(member)", kind: .signingKey, identifier: fingerprint)
    }

    /// `--identity FILE`, else `APNSCTL_IDENTITY`, else the Secret Service item this clone's member
    /// recorded (git config `apnsctl.member` and `apnsctl.recipient`).
    static func resolve(root: URL, file: String?, environment: [String: String]) async -> TeamIdentity {
        if let file, !file.isEmpty { return .file(file) }
        if let value = environment[environmentVariable], !value.trimmed.isEmpty {
            return .environment(SecretBytes(value.trimmed))
        }
        let git = Git(directory: root.path, environment: environment)
        // The team ID this clone recorded, not the one the working tree's team.json says now.
        let recorded = await git.config("apnsctl.team-id").flatMap { TeamFile.isValidTeamID($0) ? $0 : nil }
        guard let member = await git.config("apnsctl.member"), let recipient = await git.config("apnsctl.recipient"),
            let teamID = recorded ?? (try? TeamFile.read(root: root))?.teamID
        else { return .none }
        return .secretService(item(teamID: teamID, member: member, recipient: recipient))
    }

    /// The identity's bytes, held in memory only.
    func load(secrets: any SecretStore) async throws -> SecretBytes {
        switch self {
        case .environment(let value):
            return value
        case .file(let path):
            do {
                return SecretBytes(try InputFile.read(path: path, kind: .identity))
            } catch {
                throw CredentialError(
                    .notAMember,
                    path: path,
                    "The identity file cannot be read (\(UserFacing.describe(error))).",
                    hint: "Give an age identity file (age-keygen's output) or an ssh-ed25519 private key."
                )
            }
        case .secretService(let item):
            var found = try await secrets.lookup(item)
            if found == nil { found = try await secrets.lookup(Self.legacyItem(of: item)) }
            guard let value = found else {
                throw CredentialError(
                    .notAMember,
                    path: nil,
                    "This member's age identity (\(item.identifier)) is missing from the Secret Service.",
                    hint:
                        "Join again under another name and have a member add you, or give an identity in \(Self.environmentVariable)."
                )
            }
            return value
        case .none:
            throw CredentialError(
                .notAMember,
                path: nil,
                "No age identity is known for this team store: only its metadata can be read.",
                hint:
                    "Set \(Self.environmentVariable) to the member's AGE-SECRET-KEY-1… identity, or give an identity file, or join the team."
            )
        }
    }

    /// Whether an identity given in the environment is, in fact, the name of a file that exists:
    /// one line, no identity's prefix, a path to a regular file. (A common slip, since
    /// `--identity` takes a file.)
    static func looksLikeAFileName(_ value: SecretBytes) -> Bool {
        let text = String(decoding: value.bytes, as: UTF8.self)
        guard !text.contains("\n"), !text.hasPrefix("AGE-SECRET-KEY-"), !text.hasPrefix("-----BEGIN"),
            text.contains("/")
        else { return false }
        var isFolder: ObjCBool = false
        return FileManager.default.fileExists(atPath: text, isDirectory: &isFolder) && !isFolder.boolValue
    }

    public var describes: String {
        switch self {
        case .environment: return Self.environmentVariable
        case .file(let path): return path
        case .secretService: return "the Secret Service"
        case .none: return "none"
        }
    }
}

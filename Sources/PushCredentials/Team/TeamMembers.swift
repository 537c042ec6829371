import Foundation

/// `team.json` at the top of a team store: who the secrets are encrypted to. Public: names and
/// age recipients only.
public struct TeamFile: Codable, Sendable, Equatable {
    public struct Member: Codable, Sendable, Equatable {
        public var name: String
        /// An age recipient (`age1…`) or an `ssh-ed25519` public key line.
        public var recipient: String
        public var addedAt: Date
        public var addedBy: String?
    }

    public var schemaVersion = 1
    /// Names this team's identities in each member's Secret Service, whatever folder the clone is in.
    public var teamID: String
    public var members: [Member]

    // `team_id` on disk: see ReportSchema for the acronym's raw value.
    enum CodingKeys: String, CodingKey {
        case schemaVersion
        case teamID = "teamId"
        case members
    }

    static let fileName = "team.json"

    public var recipients: [String] { members.map(\.recipient) }

    public func member(named name: String) -> Member? { members.first { $0.name == name } }

    static func read(root: URL) throws -> TeamFile {
        let url = root.appendingPathComponent(fileName)
        do {
            return try ReportSchema.decoder().decode(
                TeamFile.self,
                from: Data(try InputFile.read(path: url.path, kind: .storeRecord))
            )
        } catch {
            throw CredentialError(
                .teamError,
                path: url.path,
                "The team's member list cannot be read (\(UserFacing.describe(error))).",
                hint: "Restore it from the repository's history (git checkout -- team.json) and sync again."
            )
        }
    }

    static func isTeamStore(root: URL) -> Bool {
        FileManager.default.fileExists(atPath: root.appendingPathComponent(fileName).path)
    }

    func write(root: URL) throws {
        try PrivateFile.write(
            [UInt8](try ReportSchema.encoder().encode(self)),
            to: root.appendingPathComponent(Self.fileName).path,
            overwrite: true
        )
    }

    static func validateName(_ name: String) throws {
        guard !name.isEmpty, name.count <= 64,
            name.allSatisfy({ $0.isLetter || $0.isNumber || "._-@".contains($0) })
        else {
            throw CredentialError(
                .invalidArgument,
                path: nil,
                "The member name \"\(name)\" may use only letters, digits, '.', '-', '_' and '@'.",
                hint: "For example alice or ci-deploy."
            )
        }
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
        SecretItem(store: "team:\(teamID)", alias: "identity-\(member)", kind: .privateKey, identifier: recipient)
    }

    /// `--identity FILE`, else `APNSCTL_IDENTITY`, else the Secret Service item this clone's member
    /// recorded (git config `apnsctl.member` and `apnsctl.recipient`).
    static func resolve(root: URL, file: String?, environment: [String: String]) -> TeamIdentity {
        if let file, !file.isEmpty { return .file(file) }
        if let value = environment[environmentVariable], !value.trimmed.isEmpty {
            return .environment(SecretBytes(value.trimmed))
        }
        let git = Git(directory: root.path, environment: environment)
        guard let member = git.config("apnsctl.member"), let recipient = git.config("apnsctl.recipient"),
            let team = try? TeamFile.read(root: root)
        else { return .none }
        return .secretService(item(teamID: team.teamID, member: member, recipient: recipient))
    }

    /// The identity's bytes, held in memory only.
    func load(secrets: any SecretStore) throws -> SecretBytes {
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
            guard let value = try secrets.lookup(item) else {
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

    public var describes: String {
        switch self {
        case .environment: return Self.environmentVariable
        case .file(let path): return path
        case .secretService: return "the Secret Service"
        case .none: return "none"
        }
    }
}

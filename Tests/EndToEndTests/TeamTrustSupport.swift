import Foundation
import TestSupport
import Testing

/// Someone who can push to the team's repository: a plain git clone of their own, changing
/// `team.json` by hand (as JSON) and pushing it, signed with a key of their choosing or not at all.
struct Pusher {
    var name: String
    var clone: String
    var environment: [String: String]

    init(_ work: TemporaryFolder, name: String, remote: String, environment: [String: String]) throws {
        self.name = name
        clone = work.path("pusher-\(name)-\(UUID().uuidString.prefix(6))")
        self.environment = environment
        let cloned = try CLI.runProgram("git", ["clone", "--quiet", remote, clone], environment: environment)
        guard cloned.status == 0 else { throw CLIError(message: "clone: \(cloned.stderr)") }
    }

    func git(_ arguments: [String]) throws -> CLI.Result {
        try CLI.runProgram(
            "git",
            ["-C", clone, "-c", "user.name=\(name.capitalized)", "-c", "user.email=\(name)@push.example"] + arguments,
            environment: environment
        )
    }

    /// Pulls, edits team.json's JSON, signs it with `key` (an OpenSSH private key file) or leaves
    /// the old signature in place, commits and pushes. Returns the new commit.
    @discardableResult
    func editMembers(
        signWith key: String? = nil,
        message: String,
        _ edit: (inout [String: Any], inout [[String: Any]]) throws -> Void
    ) throws -> String {
        try git(["pull", "--quiet", "--ff-only"]).succeeded()
        let path = clone + "/team.json"
        var team = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any]
        )
        var members = team["members"] as? [[String: Any]] ?? []
        try edit(&team, &members)
        team["members"] = members
        try JSONSerialization.data(withJSONObject: team, options: [.prettyPrinted, .sortedKeys])
            .write(to: URL(fileURLWithPath: path))
        if let key {
            try? FileManager.default.removeItem(atPath: path + ".sig")
            try CLI.runProgram("ssh-keygen", ["-Y", "sign", "-f", key, "-n", "apnsctl-team", path]).succeeded()
        }
        #expect(try git(["add", "--all"]).status == 0)
        try git(["commit", "--quiet", "-m", message]).succeeded()
        try git(["push", "--quiet", "origin", "HEAD"]).succeeded()
        return try git(["rev-parse", "HEAD"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A member entry as team.json writes one.
    static func entry(
        name: String,
        recipient: String,
        signingKey: String? = nil,
        like other: [String: Any]
    )
        -> [String: Any]
    {
        var entry: [String: Any] = ["name": name, "recipient": recipient, "added_at": other["added_at"] ?? ""]
        if let signingKey { entry["signing_key"] = signingKey }
        return entry
    }
}

/// Keys an outsider makes for themselves: an age identity and an ssh signing key on disk.
struct OutsiderKeys {
    var identity: String
    var recipient: String
    var signingKeyFile: String
    var signingKey: String

    init(_ work: TemporaryFolder, name: String) throws {
        (identity, recipient) = try TeamStoreTests.newIdentity()
        signingKeyFile = work.path("\(name)-signing")
        let made = try CLI.runProgram("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", signingKeyFile])
        guard made.status == 0 else { throw CLIError(message: "ssh-keygen: \(made.stderr)") }
        signingKey = try String(contentsOfFile: signingKeyFile + ".pub", encoding: .utf8)
            .split(separator: " ").prefix(2).joined(separator: " ")
    }

    /// The member entry that adds this outsider as `name`, with their signing key.
    func entry(named name: String = "mallory", like other: [String: Any]) -> [String: Any] {
        Pusher.entry(name: name, recipient: recipient, signingKey: signingKey, like: other)
    }
}

enum TeamTrustSupport {
    /// The age file of `alias`'s secret in a clone.
    static func secretFile(of alias: String, in store: String) throws -> String {
        let name = try #require(
            try FileManager.default.contentsOfDirectory(atPath: store + "/secrets").first { $0.hasPrefix(alias + ".") },
            "no secret of \(alias)"
        )
        return store + "/secrets/" + name
    }

    /// The team ID a member's clone recorded (other suites' teams share the Secret Service).
    static func teamID(of store: String) throws -> String {
        try CLI.runProgram("git", ["-C", store, "config", "--get", "apnsctl.team-id"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Whether `identity` decrypts `file`, asked of the age CLI.
    static func decrypts(_ identity: String, _ file: String) throws -> Bool {
        try CLI.runProgram("age", ["-d", "-i", "/dev/stdin", "-o", "/dev/null", file], stdin: identity + "\n")
            .status == 0
    }

    /// A member's age identity as the Secret Service holds it: the plain line age reads.
    static func identity(of member: String, in store: String, environment: [String: String]) throws -> String {
        try teamSecret("identity-\(member)", kind: "team-identity", in: store, environment: environment)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The item `alias` of `kind` that the Secret Service holds for a clone's team, as secret-tool
    /// looks it up.
    static func teamSecret(
        _ alias: String,
        kind: String,
        in store: String,
        environment: [String: String]
    ) throws -> String {
        let team = "team:\(try teamID(of: store))"
        return try CLI.runProgram(
            "secret-tool",
            ["lookup", "application", "apnsctl", "store", team, "alias", alias, "kind", kind],
            environment: environment
        ).stdout
    }

    /// A member's signing key from the Secret Service, written to a private file as ssh-keygen reads it.
    static func signingKeyFile(
        of member: String,
        in store: String,
        environment: [String: String],
        folder work: TemporaryFolder
    ) throws -> String {
        let found = try teamSecret("signing-\(member)", kind: "signing-key", in: store, environment: environment)
        #expect(found.hasPrefix("-----BEGIN OPENSSH PRIVATE KEY-----"), "\(found.prefix(40))")
        let path = work.path("\(member)-recovered-signing-key")
        FileManager.default.createFile(
            atPath: path,
            contents: Data(found.utf8),
            attributes: [.posixPermissions: 0o600]
        )
        return path
    }
}

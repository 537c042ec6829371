import CredentialFormats
import Foundation
import PushStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension TeamStore {
    /// Clones the team store at `remote` into the empty folder `root`, makes this member's age
    /// identity and signing key (kept in the Secret Service), and anchors this clone's trust in
    /// the member list: the repository's first list, signed by its founder, and every signed
    /// change since (``MembershipChain``). Until a member adds them the clone shows metadata only.
    ///
    /// All or nothing: the clone is made in a hidden folder beside `root` and moved into place
    /// last; an interrupted join leaves that folder, which the next join removes together with
    /// the keys it had put in the Secret Service.
    public static func join(
        root: URL,
        remote: String,
        name: String,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        keyring: any SecretStore = LibSecretStore()
    ) async throws -> Setup {
        try await withPrivateFiles {
            try TeamFile.validateName(name)
            let root = root.standardizedFileURL
            let remote = resolveRemote(remote)
            let parent = root.deletingLastPathComponent()
            let staging = parent.appendingPathComponent(".\(root.lastPathComponent).joining")
            await removeInterruptedJoin(at: staging, environment: environment, keyring: keyring)
            let existing = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
            guard existing.isEmpty else {
                throw CredentialError(
                    .teamError,
                    path: root.path,
                    "A team store is joined into an empty folder, and this one holds \(existing.count) item(s).",
                    hint: "Join into another, empty store folder, or move this one away."
                )
            }
            try StoreFolder.checkOwnership(root)
            try await keyring.checkAvailable()
            let age = AgeTool(environment: environment)
            _ = try age.program("age")
            try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
            let git = Git(directory: staging.path, environment: environment)
            let cloned = try await git.run(["clone", "--quiet", "--", remote, staging.path], in: parent.path)
            guard cloned.succeeded else {
                try? FileManager.default.removeItem(at: staging)
                throw CredentialError(
                    .teamError,
                    path: nil,
                    "git could not clone \(remote): \(Git.words(cloned.stderr, lines: 2))",
                    hint:
                        "Check the URL and that this machine can reach it: git ls-remote -- \(ShellWords.quote(remote))"
                )
            }
            do {
                let setup = try await anchorJoin(
                    staging: staging,
                    remote: remote,
                    name: name,
                    environment: environment,
                    keyring: keyring
                )
                if FileManager.default.fileExists(atPath: root.path) { rmdir(root.path) }
                guard rename(staging.path, root.path) == 0 else {
                    throw CredentialError(
                        .teamError,
                        path: root.path,
                        "The clone could not be moved into the store folder (\(String(cString: strerror(errno)))).",
                        hint: "Check that the folder is empty and that this user may write to \(parent.path)."
                    )
                }
                return setup
            } catch {
                await removeInterruptedJoin(at: staging, environment: environment, keyring: keyring)
                throw error
            }
        }
    }

    /// Checks the clone, makes the member's keys and records whom this clone trusts.
    private static func anchorJoin(
        staging: URL,
        remote: String,
        name: String,
        environment: [String: String],
        keyring: any SecretStore
    ) async throws -> Setup {
        let git = Git(directory: staging.path, environment: environment)
        // A bare repository made with another default branch than the one pushed (master and
        // main) clones without a checkout: take the branch the team store was pushed to.
        if await git.revision("HEAD") == nil {
            let branches = try await git.must(
                ["branch", "--remotes", "--format=%(refname:short)"],
                what: "list branches"
            )
            .split(separator: "\n").map(String.init).filter { $0 != "origin/HEAD" && $0 != "origin" }
            if let branch = branches.first(where: { $0 == "origin/main" }) ?? branches.first {
                let local = String(branch.dropFirst("origin/".count))
                try await git.must(
                    ["checkout", "--quiet", "-B", local, "--track", branch],
                    what: "check out \(branch)"
                )
            }
        }
        guard isTeamStore(staging) else {
            throw CredentialError(
                .teamError,
                path: nil,
                "\(remote) is a git repository but not a team store (it has no team.json).",
                hint: "Check the URL; a member makes the team store by starting one over an empty repository.",
                remedy: .teamStoreCreated
            )
        }
        let store = await TeamStore(root: staging, environment: environment, keyring: keyring)
        let evaluation = try await store.trust.evaluate()
        guard let trusted = evaluation.trusted, let team = trusted.team else {
            throw CredentialError(
                .untrustedMembers,
                path: nil,
                "No member list of \(remote) can be trusted: \(evaluation.pending?.reason ?? "none is signed"). Nothing was joined.",
                hint: "Ask the team's members which repository is theirs, and whether its history was changed."
            )
        }
        let current = (try? TeamFile.read(root: staging)) ?? team
        if let taken = team.member(named: name) ?? current.member(named: name) {
            throw CredentialError(
                .teamError,
                path: nil,
                "The team already has a member named \(taken.name).",
                hint: "Join under another name (the members: \(team.members.map(\.name).joined(separator: ", ")))."
            )
        }
        let age = AgeTool(environment: environment)
        let (identity, recipient) = try await age.generateIdentity()
        let signing = SigningKey()
        // Recorded in the clone before the keys are stored: an interrupted join is found with them.
        try await store.configureClone(
            teamID: team.teamID,
            member: name,
            recipient: recipient,
            signing: signing.publicKey
        )
        try await keyring.store(
            identity,
            for: TeamIdentity.item(teamID: team.teamID, member: name, recipient: recipient)
        )
        try await keyring.store(
            signing.openSSHPrivateKey,
            for: TeamIdentity.signingItem(teamID: team.teamID, member: name, fingerprint: signing.publicKey.fingerprint)
        )
        let remoteHead = await git.revision("origin/\(await git.branch)")
        let head = await git.revision("HEAD")
        try store.trust.trust(trusted, syncedHead: remoteHead ?? head)
        chmod(staging.path, 0o700)
        return Setup(
            member: name,
            recipient: recipient,
            remote: remote,
            signingKey: signing.publicKey,
            members: team.members,
            pending: evaluation.pending
        )
    }

    /// Removes the hidden folder of an interrupted join and the keys it had stored.
    static func removeInterruptedJoin(at staging: URL, environment: [String: String], keyring: any SecretStore) async {
        guard FileManager.default.fileExists(atPath: staging.path) else { return }
        let git = Git(directory: staging.path, environment: environment)
        if let team = await git.config("apnsctl.team-id"), TeamFile.isValidTeamID(team),
            let member = await git.config("apnsctl.member")
        {
            if let recipient = await git.config("apnsctl.recipient") {
                _ = try? await keyring.remove(TeamIdentity.item(teamID: team, member: member, recipient: recipient))
            }
            if let fingerprint = await git.config("apnsctl.signing-key") {
                _ = try? await keyring.remove(
                    TeamIdentity.signingItem(teamID: team, member: member, fingerprint: fingerprint)
                )
            }
        }
        try? FileManager.default.removeItem(at: staging)
    }
}

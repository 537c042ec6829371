import CredentialFormats
import Foundation
import PushStore

extension TeamStore {
    /// Which version of an alias changed on both sides a sync keeps.
    public enum Side: String, Sendable {
        case mine, theirs
    }

    public struct SyncResult: Sendable {
        /// Commits taken in from the remote.
        public var pulled = 0
        /// Commits sent to the remote.
        public var pushed = 0
        public var merged = false
        /// Changes found in the folder that no commit held, now committed.
        public var committedPending = false
        /// Set when the remote could not be reached or refused: why, with the commits still waiting.
        public var notPushed: String?
        public var waiting = 0
        public var reencrypted = 0
        /// Changes of the member list taken in, each signed by a trusted member.
        public var acceptedMembers: [AcceptedMembershipChange] = []
        /// A member list from the remote that is not trusted: nothing was encrypted to it.
        public var untrustedMembers: UntrustedMembership?
        /// Set by `restoreMembers`: the trusted list signed again, as a new version.
        public var restoredMembers: [TeamFile.Member]?
        /// Set by `resolveFork`: the side of a fork signed again, as a new version.
        public var settledFork: SettledFork?
        /// Credentials whose secrets, as the head holds them, were written for someone outside
        /// the trusted list: to be rotated.
        public var exposed: [ExposedCredential] = []
    }

    /// What a sync may do beyond taking in and pushing.
    public struct SyncOptions: Sendable {
        /// Which version to keep of aliases changed on both sides.
        public var keep: [String: Side]
        /// Go on although the remote's branch no longer holds the commit this clone last synced.
        public var acceptRewrite: Bool
        /// Commit the trusted member list again, signed, over an untrusted one.
        public var restoreMembers: Bool
        /// Settle a forked member list with the list of this commit (one of the two sides).
        public var resolveFork: String?

        public init(
            keep: [String: Side] = [:],
            acceptRewrite: Bool = false,
            restoreMembers: Bool = false,
            resolveFork: String? = nil
        ) {
            self.keep = keep
            self.acceptRewrite = acceptRewrite
            self.restoreMembers = restoreMembers
            self.resolveFork = resolveFork
        }
    }

    /// Pulls the remote's commits (merging credential by credential when both sides changed) and
    /// pushes this clone's. Never forces: a push the remote refuses is fetched, merged and tried again.
    public func sync(keep: [String: Side] = [:]) async throws -> SyncResult {
        try await sync(SyncOptions(keep: keep))
    }

    /// Pulls, checks and pushes, as ``sync(keep:)``; a remote whose history was rewritten stops
    /// it, and member lists the remote brings are taken only when signed by a trusted member.
    ///
    /// The network steps (fetch, the remote's branch name, push) run without the store's lock;
    /// each local step (commit, merge, encrypting again, trust) takes it and reads the clone's
    /// state afresh, so that a slow remote keeps no other command of the store waiting.
    public func sync(_ options: SyncOptions) async throws -> SyncResult {
        try await TeamStore.withPrivateFiles {
            var result = SyncResult()
            try await withStoreLock {
                if try await git.hasChanges() {
                    result.committedPending = try await git.commitAll("Commit changes of the store that no commit held")
                }
            }
            await alignWithRemoteHead()
            for attempt in 0..<3 {
                let fetched = try await git.run(["fetch", "--quiet", "origin"])
                let upstream = "origin/\(await git.branch)"
                guard fetched.succeeded else {
                    result.notPushed = "the remote could not be reached (git: \(Git.words(fetched.stderr)))"
                    result.waiting = (try? await git.aheadBehind(upstream: upstream).ahead) ?? 0
                    return result
                }
                let (waiting, head) = try await withStoreLock { () async throws -> (Int, String?) in
                    try await takeIn(upstream: upstream, attempt: attempt, options: options, into: &result)
                }
                guard waiting > 0, let head else { return result }
                let pushed = try await git.push(head)
                guard pushed != .pushed else {
                    result.pushed += waiting
                    _ = try? await git.run(["fetch", "--quiet", "origin"])
                    try await withStoreLock {
                        _ = try? await git.run(["branch", "--quiet", "--set-upstream-to=\(upstream)"])
                        try await recordSynced(upstream)
                    }
                    return result
                }
                // Someone pushed between our fetch and our push: take theirs in and try again.
                if attempt < 2, pushed == .remoteAhead { continue }
                if case .failed(let complaint) = pushed {
                    result.notPushed = "the remote refused the push (git: \(Git.words(complaint)))"
                } else {
                    result.notPushed = "the remote's branch moved on again each time this sync took it in"
                }
                result.waiting = waiting
                return result
            }
            return result
        }
    }

    /// The local half of one attempt, under the store's lock: what the fetch brought is checked,
    /// merged and trusted, with the clone's state read now (another command may have changed it
    /// while the lock was free). Returns how many commits wait to be pushed, and the head to push.
    private func takeIn(
        upstream: String,
        attempt: Int,
        options: SyncOptions,
        into result: inout SyncResult
    ) async throws -> (Int, String?) {
        // A change committed by nobody (a commit that failed) is committed before the merge.
        if try await git.hasChanges() {
            result.committedPending =
                try await git.commitAll("Commit changes of the store that no commit held") || result.committedPending
        }
        if attempt == 0, !options.acceptRewrite { try await checkNotRewritten(upstream: upstream) }
        let (ahead, behind) = try await git.aheadBehind(upstream: upstream)
        let theirs = await git.revision(upstream) != nil ? try await trust.evaluate(at: upstream) : nil
        // An older signed list (a remote rewound past a change) is superseded by this
        // clone's newer one in the merge; a replayed one on top is caught at HEAD below.
        // A fork of two members' signed changes, this member on both sides, is settled by the
        // merge below: the union, signed by this member, descends from both.
        let me = await memberName
        let mergeable = theirs?.pending?.fork.map { fork in
            fork.sides.allSatisfy { $0.refusal == nil } && me.map { fork.settlers.contains($0) } == true
        }
        if let pending = theirs?.pending, !pending.isStale, mergeable != true { result.untrustedMembers = pending }
        if behind > 0, ahead == 0 {
            try await git.must(["merge", "--ff-only", "--quiet", upstream], what: "take in the remote's commits")
            result.pulled += behind
        } else if behind > 0 {
            result.reencrypted += try await mergeDiverged(
                upstream: upstream,
                keep: options.keep,
                theirsTrusted: theirs?.pending == nil || mergeable == true
            )
            result.pulled += behind
            result.merged = true
        }
        try await settleTrust(
            &result,
            restore: options.restoreMembers && attempt == 0,
            resolveFork: attempt == 0 ? options.resolveFork : nil
        )
        let waiting = try await git.aheadBehind(upstream: upstream).ahead
        if waiting == 0 { try await recordSynced(upstream) }
        return (waiting, await git.revision("HEAD"))
    }

    /// Moves this clone's trust along what HEAD now holds, and reports the changes taken and a
    /// newest list that is not trusted. With `restore`, an untrusted list is replaced by the
    /// trusted one, signed again as a new version and committed.
    private func settleTrust(_ result: inout SyncResult, restore: Bool, resolveFork: String?) async throws {
        let evaluation = try await trust.evaluate(at: "HEAD")
        // Trust only moves on: a list numbered below the one this clone trusts is never saved.
        var kept = trust.loadState()?.list?.team
        if let trusted = evaluation.trusted, (trusted.team?.version ?? 0) >= (kept?.version ?? 0) {
            var list = trusted
            if list.commit == nil { list.commit = await git.revision("HEAD") }
            try trust.trust(list)
            kept = trusted.team
        }
        result.acceptedMembers += evaluation.accepted
        if let pending = evaluation.pending { result.untrustedMembers = pending }
        if let resolveFork {
            return try await settleFork(evaluation.pending?.fork, choosing: resolveFork, into: &result)
        }
        if let kept { result.exposed = await exposedCredentials(trusted: kept) }
        guard restore else { return }
        if let fork = evaluation.pending?.fork {
            let advice = Self.forkAdvice(fork)
            throw CredentialError(
                .untrustedMembers,
                path: nil,
                "The member list is forked, so restoring it would sign one side over the other unseen: "
                    + "nothing was restored.",
                hint: advice.hint,
                remedy: advice.remedy
            )
        }
        let key = try await signingKey()
        var team = try await trust.trustedTeam()
        let onDisk = (try? TeamFile.read(root: root))?.version ?? 0
        team.version = max(team.version ?? 0, onDisk) + 1
        var list = try writeSigned(team, with: key)
        try await git.commitAll(
            "Restore the trusted member list\n\nSigned by \(await memberName ?? "?") (\(key.publicKey.fingerprint)): "
                + team.members.map(\.name).joined(separator: ", ")
                + (result.untrustedMembers.map { "\nReplaces the untrusted list of commit \($0.commit ?? "?")" } ?? "")
        )
        list.commit = await git.revision("HEAD")
        try trust.trust(list)
        result.restoredMembers = team.members
        result.untrustedMembers = nil
    }

    /// Stops when the remote's branch no longer holds the commit this clone last synced: someone
    /// rewrote its history (a force push), which may hide a change or bring back a removed one.
    private func checkNotRewritten(upstream: String) async throws {
        guard let synced = trust.loadState()?.syncedHead, let head = await git.revision(upstream), synced != head else {
            return
        }
        let contained = (try? await git.run(["merge-base", "--is-ancestor", synced, head]))?.succeeded ?? false
        guard !contained else { return }
        throw CredentialError(
            .historyRewritten,
            path: nil,
            "The remote's history was rewritten: its branch \(upstream.dropFirst("origin/".count)) no longer holds "
                + "\(synced.prefix(12)), the commit this clone last synced, and now ends at \(head.prefix(12)). "
                + "Nothing was merged or pushed.",
            hint:
                "Find out who rewrote it and why (git log \(head.prefix(12)); git log \(synced.prefix(12))). "
                + "If the rewrite is meant, accept it: nothing of this clone is lost.",
            remedy: .rewriteAccepted
        )
    }

    private func recordSynced(_ upstream: String) async throws {
        guard let head = await git.revision(upstream), let state = trust.loadState() else { return }
        var updated = state
        updated.syncedHead = head
        try trust.save(updated)
    }

    static func lastLine(_ text: String) -> String {
        text.trimmed.split(separator: "\n").last.map(String.init) ?? text.trimmed
    }

    /// Merges the remote's branch into this clone's, returning how many secrets were encrypted
    /// again. The same alias changed on both sides stops the merge before anything is touched.
    private func mergeDiverged(upstream: String, keep: [String: Side], theirsTrusted: Bool) async throws -> Int {
        let base = try await git.must(["merge-base", "HEAD", upstream], what: "find the common commit").trimmed
        func index(_ revision: String) async throws -> StoreIndex {
            guard let data = await git.show(revision, "index.json") else { return StoreIndex() }
            return try ReportSchema.decoder().decode(StoreIndex.self, from: data)
        }
        func team(_ revision: String) async -> TeamFile? {
            await git.show(revision, TeamFile.fileName).flatMap {
                try? ReportSchema.decoder().decode(TeamFile.self, from: $0)
            }
        }
        let ours = try await index("HEAD")
        let baseIndex = try await index(base)
        let theirs = try await index(upstream)
        let outcome = TeamMerge.index(base: baseIndex, ours: ours, theirs: theirs, keep: keep)
        if let conflict = outcome.conflicts.first { throw await conflictError(conflict, upstream: upstream) }
        guard let ourTeam = await team("HEAD") else {
            throw CredentialError(.teamError, path: root.path, "This clone's last commit has no team.json.", hint: nil)
        }
        let theirTeam = await team(upstream)
        let baseTeam = await team(base)
        let bothChangedMembers = theirTeam != baseTeam && ourTeam != baseTeam && theirTeam != ourTeam
        // Both sides changed the member list: the union is signed anew by this member, when the
        // remote's change is trusted; an untrusted one is not merged (ours stays, and is reported).
        var mergedTeam = ourTeam
        var signer: SigningKey?
        if bothChangedMembers, theirsTrusted, let theirTeam {
            signer = try await signingKey()
            mergedTeam = TeamMerge.members(base: baseTeam, ours: ourTeam, theirs: theirTeam)
            mergedTeam.version = max(ourTeam.version ?? 0, theirTeam.version ?? 0) + 1
        }
        let ourSignature = await git.show("HEAD", TeamFile.signatureFileName)
        let merging = try await git.run(["merge", "--no-commit", "--no-ff", "--quiet", upstream])
        guard await git.revision("MERGE_HEAD") != nil else {
            throw CredentialError(
                .teamError,
                path: root.path,
                "git could not start merging the remote's commits: \(Self.lastLine(merging.stderr))",
                hint: "Look at the folder with git status; nothing was merged."
            )
        }
        do {
            try PrivateFile.write(
                [UInt8](try ReportSchema.encoder().encode(outcome.index)),
                to: root.appendingPathComponent("index.json").path,
                overwrite: true
            )
            if let signer {
                try writeSigned(mergedTeam, with: signer)
            } else if bothChangedMembers {
                try PrivateFile.write(
                    [UInt8](await git.show("HEAD", TeamFile.fileName) ?? Data()),
                    to: root.appendingPathComponent(TeamFile.fileName).path,
                    overwrite: true
                )
                let signature = root.appendingPathComponent(TeamFile.signatureFileName)
                if let ourSignature {
                    try PrivateFile.write([UInt8](ourSignature), to: signature.path, overwrite: true)
                } else {
                    try? FileManager.default.removeItem(at: signature)
                }
            }
            let conflicted = try await git.must(["diff", "--name-only", "--diff-filter=U"], what: "list conflicts")
                .split(separator: "\n").map(String.init)
            for path in conflicted
            where path != "index.json" && path != TeamFile.fileName && path != TeamFile.signatureFileName {
                // Secret files of the same name hold the same secret encrypted to different member
                // sets: keep ours, and encrypt everything again below.
                if !(try await git.run(["checkout", "--ours", "--", path])).succeeded {
                    _ = try await git.run(["checkout", "--theirs", "--", path])
                }
            }
            for loser in outcome.discarded {
                for file in [loser.certificateFile, loser.bundleFile].compactMap({ $0 })
                where !outcome.index.credentials.contains(where: { $0.certificateFile == file || $0.bundleFile == file }
                ) {
                    try? FileManager.default.removeItem(at: root.appendingPathComponent(file))
                }
                let secret = root.appendingPathComponent(
                    TeamSecretStore.relativePath(of: loser.secretItem(store: root.path))
                )
                let kept = outcome.index.credentials.contains {
                    $0.secretItem(store: root.path) == loser.secretItem(store: root.path)
                }
                if !kept { try? FileManager.default.removeItem(at: secret) }
            }
            var reencrypted = 0
            if signer != nil {
                reencrypted = try await secrets.reencryptAll(to: mergedTeam.recipients)
            }
            // What the remote's commits hold comes in as it is; of this clone, only the store's own files.
            try await TeamStaging(git: git).stage(mergingFrom: upstream)
            try await git.commit(
                mergeMessage(ours: ours, merged: outcome.index, upstream: upstream),
                what: "commit the merge"
            )
            return reencrypted
        } catch {
            _ = try? await git.run(["merge", "--abort"])
            throw error
        }
    }

    private func mergeMessage(ours: StoreIndex, merged: StoreIndex, upstream: String) -> String {
        let changes = TeamChangeLog.message(from: ours, to: merged)
        return "Merge \(upstream)\n\nTaken in from the remote:\n"
            + (changes.hasPrefix("Tidy") ? "- member or file changes" : changes)
    }

    private func conflictError(_ conflict: TeamMerge.Conflict, upstream: String) async -> CredentialError {
        func version(_ credential: StoredCredential?) -> String {
            credential.map { TeamChangeLog.describe($0) + ", imported \(MessageDate.day($0.importedAt))" }
                ?? "removed"
        }
        let author = (try? await git.run(["log", "-1", "--format=%an, commit %h", upstream, "--", "index.json"]))?
            .output
            .trimmed
        return CredentialError(
            .teamConflict,
            path: nil,
            "\(conflict.alias) was changed both here and on the remote since this clone last synced. "
                + "Here: \(version(conflict.ours)). On the remote (\(author ?? upstream)): \(version(conflict.theirs)). "
                + "Nothing was merged or pushed; every commit of both sides is kept.",
            hint:
                "Choose the version to keep with a sync that keeps the remote's or yours for \(conflict.alias); "
                + "the other stays in the history.",
            alias: conflict.alias,
            remedy: .sideChosen(alias: conflict.alias)
        )
    }
}

import Foundation

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
    }

    /// Pulls the remote's commits (merging credential by credential when both sides changed) and
    /// pushes this clone's. Never forces: a push the remote refuses is fetched, merged and tried again.
    public func sync(keep: [String: Side] = [:]) throws -> SyncResult {
        try withStoreLock {
            var result = SyncResult()
            if try git.hasChanges() {
                result.committedPending = try git.commitAll("Commit changes of the store that no commit held")
            }
            for attempt in 0..<3 {
                let fetched = try git.run(["fetch", "--quiet", "origin"])
                let upstream = "origin/\(git.branch)"
                guard fetched.succeeded else {
                    result.notPushed = "the remote could not be reached (\(Self.lastLine(fetched.stderr)))"
                    result.waiting = (try? git.aheadBehind(upstream: upstream).ahead) ?? 0
                    return result
                }
                let (ahead, behind) = try git.aheadBehind(upstream: upstream)
                if behind > 0, ahead == 0 {
                    try git.must(["merge", "--ff-only", "--quiet", upstream], what: "take in the remote's commits")
                    result.pulled += behind
                } else if behind > 0 {
                    result.reencrypted += try mergeDiverged(upstream: upstream, keep: keep)
                    result.pulled += behind
                    result.merged = true
                }
                let waiting = try git.aheadBehind(upstream: upstream).ahead
                if waiting == 0 { return result }
                guard let complaint = try git.push() else {
                    result.pushed += waiting
                    _ = try? git.run(["branch", "--quiet", "--set-upstream-to=\(upstream)"])
                    return result
                }
                // Someone pushed between our fetch and our push: take theirs in and try again.
                if attempt < 2, complaint.contains("rejected") || complaint.contains("fetch first") { continue }
                result.notPushed = "the remote refused the push (\(Self.lastLine(complaint)))"
                result.waiting = waiting
                return result
            }
            return result
        }
    }

    static func lastLine(_ text: String) -> String {
        text.trimmed.split(separator: "\n").last.map(String.init) ?? text.trimmed
    }

    /// Merges the remote's branch into this clone's, returning how many secrets were encrypted
    /// again. The same alias changed on both sides stops the merge before anything is touched.
    private func mergeDiverged(upstream: String, keep: [String: Side]) throws -> Int {
        let base = try git.must(["merge-base", "HEAD", upstream], what: "find the common commit").trimmed
        func index(_ revision: String) throws -> StoreIndex {
            guard let data = git.show(revision, "index.json") else { return StoreIndex() }
            return try ReportSchema.decoder().decode(StoreIndex.self, from: data)
        }
        func team(_ revision: String) -> TeamFile? {
            git.show(revision, TeamFile.fileName).flatMap {
                try? ReportSchema.decoder().decode(TeamFile.self, from: $0)
            }
        }
        let ours = try index("HEAD")
        let outcome = TeamMerge.index(base: try index(base), ours: ours, theirs: try index(upstream), keep: keep)
        if let conflict = outcome.conflicts.first { throw conflictError(conflict, upstream: upstream) }
        guard let ourTeam = team("HEAD") else {
            throw CredentialError(.teamError, path: root.path, "This clone's last commit has no team.json.", hint: nil)
        }
        let theirTeam = team(upstream)
        let mergedTeam = TeamMerge.members(base: team(base), ours: ourTeam, theirs: theirTeam)
        let merging = try git.run(["merge", "--no-commit", "--no-ff", "--quiet", upstream])
        guard git.revision("MERGE_HEAD") != nil else {
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
            try mergedTeam.write(root: root)
            let conflicted = try git.must(["diff", "--name-only", "--diff-filter=U"], what: "list conflicts")
                .split(separator: "\n").map(String.init)
            for path in conflicted where path != "index.json" && path != TeamFile.fileName {
                // Secret files of the same name hold the same secret encrypted to different member
                // sets: keep ours, and encrypt everything again below.
                if !(try git.run(["checkout", "--ours", "--", path])).succeeded {
                    _ = try git.run(["checkout", "--theirs", "--", path])
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
            if Set(mergedTeam.recipients) != Set(ourTeam.recipients)
                || Set(mergedTeam.recipients) != Set(theirTeam?.recipients ?? [])
            {
                reencrypted = try secrets.reencryptAll(to: mergedTeam.recipients)
            }
            try git.must(["add", "--all", "."], what: "stage the merge")
            try git.must(
                [
                    "commit", "--quiet", "--no-verify", "-m",
                    mergeMessage(ours: ours, merged: outcome.index, upstream: upstream),
                ],
                what: "commit the merge"
            )
            return reencrypted
        } catch {
            _ = try? git.run(["merge", "--abort"])
            throw error
        }
    }

    private func mergeMessage(ours: StoreIndex, merged: StoreIndex, upstream: String) -> String {
        let changes = TeamChangeLog.message(from: ours, to: merged)
        return "Merge \(upstream)\n\nTaken in from the remote:\n"
            + (changes.hasPrefix("Tidy") ? "- member or file changes" : changes)
    }

    private func conflictError(_ conflict: TeamMerge.Conflict, upstream: String) -> CredentialError {
        func version(_ credential: StoredCredential?) -> String {
            credential.map { TeamChangeLog.describe($0) + ", imported \(CertificateFindings.day($0.importedAt))" }
                ?? "removed"
        }
        let author = (try? git.run(["log", "-1", "--format=%an, commit %h", upstream, "--", "index.json"]))?.output
            .trimmed
        return CredentialError(
            .teamConflict,
            path: nil,
            "\(conflict.alias) was changed both here and on the remote since this clone last synced. "
                + "Here: \(version(conflict.ours)). On the remote (\(author ?? upstream)): \(version(conflict.theirs)). "
                + "Nothing was merged or pushed; every commit of both sides is kept.",
            hint:
                "Choose the version to keep: `apnsctl team sync --keep-theirs \(conflict.alias)\(storeArgument)` takes the remote's, "
                + "`apnsctl team sync --keep-mine \(conflict.alias)\(storeArgument)` keeps yours; the other stays in the history.",
            alias: conflict.alias
        )
    }

    // MARK: Status

    public struct Status: Sendable {
        public var remote: String?
        public var branch: String
        public var members: [TeamFile.Member]
        public var member: String?
        public var recipient: String?
        public var identitySource: String
        /// Whether this clone's recipient is among the members (so it can read the secrets).
        public var isMember: Bool
        public var remoteReachable: Bool
        public var ahead: Int
        public var behind: Int
        public var uncommitted: Bool
    }

    /// Where the clone stands: fetches first when the remote can be reached.
    public func status() throws -> Status {
        let team = try members()
        let reachable = (try? git.run(["fetch", "--quiet", "origin"]))?.succeeded ?? false
        let counts = (try? git.aheadBehind(upstream: "origin/\(git.branch)")) ?? (0, 0)
        let recipient = ownRecipient()
        return Status(
            remote: git.remoteURL,
            branch: git.branch,
            members: team.members,
            member: memberName ?? recipient.flatMap { own in team.members.first { $0.recipient == own }?.name },
            recipient: recipient,
            identitySource: identity.describes,
            isMember: recipient.map { team.recipients.contains($0) } ?? false,
            remoteReachable: reachable,
            ahead: counts.0,
            behind: counts.1,
            uncommitted: (try? git.hasChanges()) ?? false
        )
    }
}

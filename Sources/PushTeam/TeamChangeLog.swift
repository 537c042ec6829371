import CredentialFormats
import Foundation
import PushStore

/// Commits every change to a team store with a message that says what changed, under the
/// store's lock, and pushes it once the lock is released (a slow remote keeps no other command
/// waiting). Offline, the commit stays local and a sync pushes it later; the person is told
/// either way, through the team store's notifier.
struct TeamCommitter: StoreChangeObserver {
    var team: TeamStore

    func storeChanged(
        _ store: CredentialStore,
        from before: StoreIndex,
        to after: StoreIndex
    ) async -> StoreChangeFollowUp? {
        let message = TeamChangeLog.message(from: before, to: after)
        do {
            guard try await team.git.commitAll(message) else { return nil }
            let subject = message.split(separator: "\n").first.map(String.init) ?? message
            let revision = await team.git.revision("HEAD")
            return { [team] in team.notify(await team.publish(committed: subject, revision: revision)) }
        } catch {
            // The whole reason and what to do, never cut short: the person must act on it.
            let detail =
                (error as? CredentialError).map { [$0.message, $0.hint].compactMap { $0 }.joined(separator: " ") }
                ?? UserFacing.describe(error)
            team.notify(.notCommitted(detail: detail))
            return nil
        }
    }
}

/// Commit messages from the difference between two indexes: alias, app, environments, expiry.
enum TeamChangeLog {
    static func message(from before: StoreIndex, to after: StoreIndex) -> String {
        var lines: [String] = []
        let old = Dictionary(before.credentials.map { ($0.alias, $0) }, uniquingKeysWith: { first, _ in first })
        let new = Dictionary(after.credentials.map { ($0.alias, $0) }, uniquingKeysWith: { first, _ in first })
        for credential in after.credentials {
            guard let previous = old[credential.alias] else {
                lines.append("Import \(credential.alias): \(describe(credential))")
                continue
            }
            if previous.sha256 != credential.sha256 || previous.keyID != credential.keyID {
                lines.append("Rotate \(credential.alias): \(describe(credential)), replacing \(describe(previous))")
            } else if previous != credential {
                lines.append("Update \(credential.alias): \(describe(credential))")
            }
        }
        for credential in before.credentials where new[credential.alias] == nil {
            lines.append("Remove \(credential.alias): \(describe(credential))")
        }
        let oldRequests = Set((before.requests ?? []).map(\.alias))
        let newRequests = Set((after.requests ?? []).map(\.alias))
        for request in after.requests ?? [] where !oldRequests.contains(request.alias) {
            lines.append("Request \(request.alias): \(request.keyType) key \(request.publicKeyFingerprint.prefix(23))…")
        }
        for request in before.requests ?? [] where !newRequests.contains(request.alias) {
            lines.append("Close request \(request.alias)")
        }
        if lines.isEmpty { return "Tidy the store's files" }
        if lines.count == 1 { return lines[0] }
        return "\(lines.count) changes to the store\n\n" + lines.map { "- \($0)" }.joined(separator: "\n")
    }

    /// One line for one credential: what it is for and until when.
    static func describe(_ credential: StoredCredential) -> String {
        let topics = credential.topics.prefix(3).joined(separator: ", ") + (credential.topics.count > 3 ? ", …" : "")
        let environments =
            credential.environments.isEmpty
            ? "environment unknown" : credential.environments.map(\.rawValue).joined(separator: "+")
        switch credential.kind {
        case .certificate:
            let expiry = credential.notAfter.map { "expires \(MessageDate.day($0))" } ?? "expiry unknown"
            let fingerprint = (credential.sha256 ?? "").prefix(11)
            return "certificate \(fingerprint)… for \(topics) (\(environments)), \(expiry)"
        case .tokenKey:
            return
                "token key \(credential.keyID ?? "?") of team \(credential.teamID ?? "?") for \(topics) (\(environments))"
        }
    }
}

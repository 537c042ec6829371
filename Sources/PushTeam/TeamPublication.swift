import Foundation
import PushStore

/// What became of a change's commit in a team store, as a value: the team store hands it to its
/// notifier, and a front end words it (the command line prints the sync command to run, with its
/// store). The library never spells a command line.
public enum TeamPublication: Hashable, Sendable {
    /// Why a commit stayed in this clone.
    public enum Reason: Hashable, Sendable {
        /// The remote has commits this clone has not seen: a sync merges them, then pushes.
        case remoteAhead
        /// The remote could not be reached; `detail` is git's own words, without secrets.
        case unreachable(detail: String)
        /// Pushing could not be tried (`detail` says why).
        case failed(detail: String)
    }

    /// Committed and pushed: the remote has the change.
    case pushed(subject: String)
    /// Committed in this clone only; a sync pushes it.
    case committedNotPushed(subject: String, reason: Reason)
    /// The change is in the folder but no commit holds it (`detail` says why); a sync commits it.
    case notCommitted(detail: String)

    /// The remedy a front end offers: none once pushed, else a sync.
    public var remedy: Remedy? {
        if case .pushed = self { return nil }
        return .teamSynced
    }
}

/// What a check found, as a whole: the one value every judging use case returns (a check of
/// credentials, apps or a store; a preflight), for a front end to turn into its own signal (the
/// command-line tool's exit status, a health endpoint's code, a deploy gate).
public enum CheckOutcome: Sendable, Hashable, Comparable {
    /// Everything asked about was judged, and nothing failed.
    case allWell
    /// Something could not be judged (a file unreadable, a secret store unavailable, a network
    /// failure) and nothing judged failed.
    case couldNotCheck
    /// Something was judged and failed: an app not ready, a finding at the chosen severity.
    case problemFound

    /// The outcome of several checks: a problem found wins, then what could not be checked.
    public static func combined(_ outcomes: some Sequence<CheckOutcome>) -> CheckOutcome {
        outcomes.max() ?? .allWell
    }
}

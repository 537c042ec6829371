/// What is needed to resolve an error or an outcome, as a value: a state to reach, not a
/// command. A front end renders it as its own command, button or sentence (the command-line
/// tool prints a command that works when pasted). Libraries never spell a command line; the
/// error's ``ReportableError/hint`` says the same in words for a reader of the library's
/// messages.
public enum Remedy: Hashable, Sendable {
    /// What a credential holds must be looked at: its dates, its topics, whether its key belongs
    /// to it (`file`, or the credential the failing operation was given).
    case credentialExamined(file: String?)
    /// A credential must be in the store first (`file`, or any).
    case credentialStored(file: String?)
    /// The team store's state must be seen: its members, their trust, what waits to be pushed.
    case teamStoreReviewed
    /// There must be a team store at the remote: a member makes it.
    case teamStoreCreated
    /// This store must be a clone of the team whose store is at `remote`, joined as `name`.
    case teamJoined(remote: String, name: String)
    /// A member must add this clone's identity (the recipient its join gave); then a sync.
    case addedByAMember
    /// The clone must be merged with the team's remote, and what waits pushed.
    case teamSynced
    /// Two clones changed the credential `alias`: one side must be kept (the other stays in the
    /// history).
    case sideChosen(alias: String)
    /// The token key `alias` is needed as the PEM (.p8) it was imported from.
    case tokenKeyAsPEM(alias: String)
    /// The member list of one of `commits` (short hashes) must be kept, signed again as a new
    /// version: the fork is settled that way.
    case forkResolved(commits: [String])
    /// The remote's rewritten history must be taken in (nothing of this clone is lost).
    case rewriteAccepted
    /// The identity the environment variable names must be given as a file instead.
    case identityGivenAsFile
}

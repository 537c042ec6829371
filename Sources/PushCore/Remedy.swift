/// What a person can do about an error or an outcome, as a value: a front end renders it as its
/// own command, button or sentence (the command-line tool prints a command that works when
/// pasted). Libraries never spell a command line; the error's ``ReportableError/hint`` says the
/// same in words for a reader of the library's messages.
public enum Remedy: Hashable, Sendable {
    /// Look at a credential file: what it holds, its dates, whether its key belongs to it.
    case inspect(file: String?)
    /// Store a credential (`file`, or any).
    case importCredential(file: String?)
    /// See the team store's members, trust and what waits to be pushed.
    case teamStatus
    /// Make a team store in this folder.
    case teamInit
    /// Join the team whose store is at `remote`, as `name`.
    case teamJoin(remote: String, name: String)
    /// Ask a member to add this clone's identity (the recipient the join printed), then sync.
    case askToBeAdded
    /// Merge with the team's remote and push what waits.
    case teamSync
    /// Two clones changed the credential `alias`: keep one side (the other stays in history).
    case chooseSide(alias: String)
    /// Export the token key `alias` as the PEM (.p8) it was imported from.
    case exportAsPEM(alias: String)
    /// Sync again keeping the forked member list of one of `commits` (short hashes), signed again.
    case resolveFork(commits: [String])
    /// Sync again taking in a remote whose history was rewritten (nothing of this clone is lost).
    case acceptRewrite
    /// Give the file the identity variable names as the identity file instead.
    case identityFile
}

import PushCore
import PushStore
import PushTeam

/// The command line's rendering of the libraries' remedies: each as a command that works when
/// pasted (quoted, with this run's `--store`), after the library's own words where they add
/// something.
enum RemedyText {
    static func text(_ remedy: Remedy, words: String?) -> String {
        let lead = words.map { $0 + " " } ?? ""
        switch remedy {
        case .credentialExamined(let file?):
            return lead + "`\(ErrorHints.command("inspect", file))` shows what the file holds."
        case .credentialExamined(nil):
            guard let argument = RunContext.current[\.credentialArgument] else { return words ?? "" }
            if CredentialReference.looksLikePath(argument) {
                return lead + "`\(ErrorHints.command("inspect", argument))` shows what the file holds."
            }
            return lead + "`\(ErrorHints.command("check", argument))` checks the stored credential and its key."
        case .credentialStored(let file):
            return "Import one (`\(ErrorHints.command("import", file ?? "FILE"))`) or name credential files."
        case .teamStoreReviewed:
            return "See it with `\(ErrorHints.command("team", "status"))`."
        case .teamStoreCreated:
            return "Check the URL; a member makes the team store with `\(ErrorHints.command("team", "init"))`."
        case .teamJoined(let remote, let name):
            return
                "To use that team's store, join it: `\(ErrorHints.plainCommand("team", "join", remote, "--name", name))` into an empty store folder."
        case .addedByAMember:
            return "Ask a member to add you with the command `apnsctl team join` printed, then sync."
        case .teamSynced:
            return lead + "`\(ErrorHints.command("team", "sync"))` merges and pushes."
        case .sideChosen(let alias):
            return
                "Choose the version to keep: `\(ErrorHints.command("team", "sync", "--keep-theirs", alias))` takes the remote's, `\(ErrorHints.command("team", "sync", "--keep-mine", alias))` keeps yours; the other stays in the history."
        case .tokenKeyAsPEM(let alias):
            return "`\(ErrorHints.command("export", alias, "--format", "pem"))` writes the .p8 key."
        case .forkResolved(let commits):
            let commands = commits.map { "`\(ErrorHints.command("team", "sync", "--resolve-fork", $0))`" }
            return lead + commands.joined(separator: " or ") + (commits.count > 1 ? " keeps that side." : " keeps it.")
        case .rewriteAccepted:
            return lead + "`\(ErrorHints.command("team", "sync", "--accept-rewrite"))` takes the rewritten history in."
        case .identityGivenAsFile:
            return
                "Give that file with --identity instead, or set \(TeamIdentity.environmentVariable) to the line inside it."
        }
    }
}

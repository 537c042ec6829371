import PushTeam

/// The command line's words for what became of a team store's commit: said on stderr after the
/// command's own output, with the sync to run (and this run's `--store`) when it waits here.
enum TeamPublicationText {
    static func text(_ publication: TeamPublication) -> String {
        let sync = "`\(ErrorHints.command("team", "sync"))`"
        switch publication {
        case .pushed(let subject):
            return "team store: committed and pushed \"\(subject)\"."
        case .committedNotPushed(let subject, .remoteAhead):
            return
                "team store: committed \"\(subject)\"; the remote has changes this clone has not seen, so it was not pushed. Run \(sync) to merge and push."
        case .committedNotPushed(let subject, .unreachable(let detail)):
            return
                "team store: committed \"\(subject)\" here only: the remote could not be reached (git: \(detail)). Run \(sync) once it can."
        case .committedNotPushed(let subject, .failed(let detail)):
            return "team store: committed \"\(subject)\" here only (\(detail)). Run \(sync) to push it."
        case .notCommitted(let detail):
            return
                "team store: the change is made in the store's folder, but no commit holds it: \(detail)\nOnce that is done, \(sync) commits and pushes it."
        }
    }
}

/// Says what became of a team store's commit, on stderr; a change left uncommitted fails the run.
func teamNote(_ publication: TeamPublication) {
    // A change no commit holds is not shared: the command fails (exit 2) once it has said so.
    if case .notCommitted = publication { RunContext.current[\.teamChangeNotCommitted] = true }
    teamNote(TeamPublicationText.text(publication))
}

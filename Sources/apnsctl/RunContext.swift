import Foundation
import PushStore

/// The state one run of the program shares between its parts, in one place: what the command
/// line asked before parsing (JSON, the store), the first error a command reported, whether its
/// report was printed, what standard output did, the credential loaded while parsing, and the
/// signal sources kept alive.
///
/// The argument parser builds each command itself, so a command cannot be handed this object;
/// it reaches it as `RunContext.current`, made once by ``APNSCtl/main()``'s process. Every field
/// is behind one lock, so reads and writes from a signal queue or a loader thread are safe.
/// The one state not here is the terminal mode a password prompt restores from its SIGINT
/// handler, which may touch only plain memory (``TerminalPrompt``).
final class RunContext: @unchecked Sendable {
    static let current = RunContext()

    private let lock = NSLock()
    private var state = State()

    struct State {
        /// The command line asks for JSON (`--json`, `--format json`).
        var jsonRequested = false
        /// The command printed its JSON report: a failure after it prints no second document.
        var reportPrinted = false
        /// The first error a command reported: the one that stopped it.
        var firstError: ReportedError?
        /// `--store` as given, for hints that print commands.
        var storeArgument: String?
        /// The credential (alias or file) the command loads, for hints about it.
        var credentialArgument: String?
        /// Why standard output could not be written, once it could not.
        var outputFailure: String?
        /// What is printed while a report is captured for a file.
        var captured: String?
        var signalSources: [any DispatchSourceSignal] = []
        /// A team store's change was made in the folder but no commit holds it: the run fails.
        var teamChangeNotCommitted = false
    }

    /// Reads or changes the state under the lock.
    func with<R>(_ body: (inout State) throws -> R) rethrows -> R {
        try lock.withLock { try body(&state) }
    }

    subscript<Value>(_ field: WritableKeyPath<State, Value>) -> Value {
        get { with { $0[keyPath: field] } }
        set { with { $0[keyPath: field] = newValue } }
    }
}

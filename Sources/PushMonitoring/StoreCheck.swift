import CredentialFormats
import Foundation
import PushChecks
import PushStore

/// Judges every credential of a store, as `check` does without arguments (the same library
/// call), for a long-running exporter. It never writes to the store and never throws: a store
/// that cannot be read is a failed run.
public struct StoreCheck: Sendable {
    public var store: CredentialStore
    public var warnDays: Int
    public var skipSecrets: Bool

    public init(store: CredentialStore, warnDays: Int = 30, skipSecrets: Bool = false) {
        self.store = store
        self.warnDays = warnDays
        self.skipSecrets = skipSecrets
    }

    public func run(at date: Date = Date()) async -> CheckRun {
        // A monitoring reader leaves what an interrupted command left to the next command that writes.
        let request = CheckRequest(
            date: date,
            warnDays: warnDays,
            skipSecrets: skipSecrets,
            settlesInterruptedChanges: false
        )
        do {
            return CheckRun(try await CredentialCheck.run(request, in: store), store: store)
        } catch let error as CredentialError {
            return .failed(at: date, error.message, source: X509Source.of(store))
        } catch {
            return .failed(
                at: date,
                "The store at \(store.path) cannot be read: \(error).",
                source: X509Source.of(store)
            )
        }
    }
}

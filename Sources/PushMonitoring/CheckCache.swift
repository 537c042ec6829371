import Foundation
import PushStore

/// What the exporter read of its store, kept for the refresh interval: every scrape of
/// `/metrics` and every `/probe` is served from it, so a store in Vault is read once per
/// interval, not a few requests per credential per scrape. The check reads the store and may
/// ask the Secret Service (on the libraries' ``BlockingPool``, never the actor's thread); a read
/// is made when one is asked for after the interval, and concurrent requests share that one read.
///
/// A read that fails keeps the last good one's results (as x509-certificate-exporter keeps the
/// bundles it holds when a source fails): its certificates keep their series and alerts, the
/// check says it failed (`apnsctl_check_success 0`, `x509_source_up 0`), and
/// `apnsctl_check_timestamp_seconds` stays at the last good read, so the staleness alert fires
/// when failures last.
actor CheckCache {
    let check: StoreCheck
    let interval: Double
    let source: X509Source
    /// The last read that succeeded.
    private var lastGood: CheckRun?
    /// The last read, and when it was made.
    private var last: CheckRun?
    private var lastAttempt: Date?
    private var running: Task<CheckRun, Never>?
    private var status: X509SourceStatus
    /// Reads of the store made so far.
    private(set) var reads = 0

    init(check: StoreCheck, interval: Double) {
        self.check = check
        self.interval = interval
        source = X509Source.of(check.store)
        status = X509SourceStatus(source: source, up: false, bundles: 0)
    }

    /// Whether a read of the store has succeeded (`/readyz`).
    var ready: Bool { lastGood != nil }

    /// The check to serve: the last read when it is within the interval, else a new one.
    func current(now: Date = Date()) async -> CheckRun {
        await refreshed(now: now)
        return served
    }

    /// The check and the source's state, from one read.
    func snapshot(now: Date = Date()) async -> (run: CheckRun, source: X509SourceStatus) {
        await refreshed(now: now)
        return (served, status)
    }

    /// The store's index as last read, for `/probe`; nil when the store was never read.
    func index(now: Date = Date()) async -> (stored: [StoredCredential]?, failure: String?) {
        await refreshed(now: now)
        return (lastGood?.stored, last?.failure)
    }

    private var served: CheckRun {
        guard let last else { return .failed(at: Date(), "The store was not read yet.", source: source) }
        guard last.failure != nil, var kept = lastGood else { return last }
        kept.failure = last.failure
        return kept
    }

    private func refreshed(now: Date) async {
        if let lastAttempt, now.timeIntervalSince(lastAttempt) < interval, last != nil { return }
        if let running {
            _ = await running.value
            return
        }
        let task = Task { [check] in await check.run(at: now) }
        running = task
        let run = await task.value
        running = nil
        reads += 1
        last = run
        lastAttempt = now
        if run.failure == nil { lastGood = run }
        status.count(run)
        status.up = run.failure == nil
        status.bundles = lastGood?.stored.count ?? 0
    }
}

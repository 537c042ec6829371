import Foundation

/// Work an observer hands back to run once the store's lock is released: what is slow or waits
/// on a network (a team store's push) never keeps other commands waiting on the store.
package typealias StoreChangeFollowUp = @Sendable () async -> Void

/// Told of every change to a store once its new index is in place, still under the store's lock:
/// the seam a store that is more than a folder (a team store, which commits each change) builds
/// on, without the store knowing of it. What must happen under the lock (the commit) happens in
/// ``storeChanged(_:from:to:)``; what can wait for the lock's release (the push) is returned.
package protocol StoreChangeObserver: Sendable {
    func storeChanged(
        _ store: CredentialStore,
        from before: StoreIndex,
        to after: StoreIndex
    ) async -> StoreChangeFollowUp?
}

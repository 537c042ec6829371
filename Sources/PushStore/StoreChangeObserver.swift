import Foundation

/// Told of every change to a store once its new index is in place, still under the store's lock:
/// the seam a store that is more than a folder (a team store, which commits and pushes each
/// change) builds on, without the store knowing of it.
package protocol StoreChangeObserver: Sendable {
    func storeChanged(_ store: CredentialStore, from before: StoreIndex, to after: StoreIndex)
}

import Foundation
import PushCore
import PushGateway

/// A bulk run's provider token: fetched before the first send and kept fresh for a key held
/// elsewhere, made into the `authorization` value once per token, and replaced once when APNs
/// refuses it.
extension BulkSender {
    /// For a key held elsewhere: fetches its token now, then keeps it fresh (the cache asks its
    /// source only when the token has aged) until the run ends. Nil for a key in memory.
    func startTokenRefresh() async throws -> Task<Void, Never>? {
        guard let tokens, tokens.needsPreparing else { return nil }
        try await GatewayConnection.prepare(tokens)
        return Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(30))
                try? await tokens.prepare()
            }
        }
    }

    /// Drops the token APNs refused (its source is told, so a shared token is replaced) and
    /// fetches another, off the event loop; the engine resumes sending once it has it.
    func refreshProviderToken() {
        guard let tokens else {
            perform(engine.providerTokenRefreshed(failure: "the credential has no provider token", now: now()))
            return
        }
        let refused = lastAuthorization?.bearer
        Task { [self] in
            var failure: String?
            if let refused { _ = await tokens.dropRejected(refused) }
            do {
                try await GatewayConnection.prepare(tokens)
            } catch {
                failure = (error as? any ReportableError)?.message ?? UserFacing.describe(error)
            }
            let reason = failure
            loop.execute { [self] in
                guard !finished else { return }
                perform(engine.providerTokenRefreshed(failure: reason, now: now()))
                schedulePump()
            }
        }
    }

    /// The `authorization` value for `bearer`, made once per token rather than per request.
    func authorization(_ bearer: String?) -> String? {
        guard let bearer else { return nil }
        if let last = lastAuthorization, last.bearer == bearer { return last.value }
        let value = RequestEncoder.authorization(bearer: bearer)
        lastAuthorization = (bearer, value)
        return value
    }
}

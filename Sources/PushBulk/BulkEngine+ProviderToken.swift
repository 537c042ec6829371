import Foundation
import PushCore

extension BulkEngine {
    /// Where the run's provider token is, when it comes from a source that can give another
    /// (``Configuration/refreshesProviderToken``).
    enum ProviderTokenState: Equatable {
        /// The first token (or, with no source, the only kind there is).
        case inUse
        /// APNs refused it: the driver is getting another; nothing new is sent meanwhile.
        case refreshing
        /// The token in use replaced a refused one: a refusal of it stops the run.
        case replaced
    }

    // MARK: Provider token

    /// The driver has another provider token (`failure` nil), or could not get one: then the
    /// run stops as for a refused credential, and the lines waiting are left for a resumed run.
    public mutating func providerTokenRefreshed(failure: String?, now: Double) -> [Action] {
        guard !isFinished, providerToken == .refreshing else { return [] }
        var actions: [Action] = []
        providerToken = .replaced
        if let failure, !stopping {
            summary.stopReason = APNsReason.invalidProviderToken.rawValue
            stop(
                .credentialRejected,
                message:
                    "APNs answered 403 InvalidProviderToken and no other provider token could be had: \(failure)",
                hint: APNsReason.invalidProviderToken.fix,
                now: now,
                into: &actions
            )
            checkFinished(now: now, into: &actions)
            return actions
        }
        actions += fill(now: now)
        return actions
    }

    /// APNs answered `InvalidProviderToken` to `flight`. When the token can be replaced and
    /// this is the first refusal, or the send carried a token already dropped, the line is sent
    /// again (it was not delivered, so it is not uncertain) and true returned; false when the
    /// refusal stops the run.
    mutating func sendAgainWithNewToken(_ flight: InFlight, now: Double, into actions: inout [Action]) -> Bool {
        guard configuration.refreshesProviderToken else { return false }
        if flight.tokenGeneration < tokenGeneration {
            notProcessed(flight.item, now: now, into: &actions)  // the old token, dropped already
            return true
        }
        guard providerToken == .inUse, !stopping else { return false }
        providerToken = .refreshing
        tokenGeneration += 1
        notProcessed(flight.item, now: now, into: &actions)
        actions.append(.refreshProviderToken)
        return true
    }
}

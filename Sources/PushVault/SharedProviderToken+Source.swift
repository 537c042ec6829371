import Foundation
import PushCore

extension SharedProviderToken: ProviderTokenSource {
    /// The fleet's token for this key, as a connection asks for it (see ``token()``). A failure
    /// is reported as every library error is, with Vault's code and the server's address.
    public func currentToken() async throws -> IssuedProviderToken {
        do {
            let shared = try await token()
            return IssuedProviderToken(jwt: shared.token, issuedAt: shared.issuedAt)
        } catch let error as VaultError {
            throw error.reportable
        }
    }

    /// APNs refused `token` (`InvalidProviderToken`): it is dropped, and the next
    /// ``currentToken()`` signs a new one (see ``reject(_:)``).
    public func tokenRejected(_ token: IssuedProviderToken) async { reject(token.jwt) }
}

/// A ``VaultError`` in the shape every library error has (``ReportableError``): its code by
/// name, its words, and the server as the subject. Its kind is its code's: Vault's codes are all
/// a check that could not be made (a server, path or token that cannot be used).
package struct ReportedVaultError: ReportableError, CustomStringConvertible {
    public let error: VaultError
    public var code: ErrorCode { ErrorCode(error.code.name) }
    public var message: String { error.message }
    public var hint: String? { error.hint }
    public var subject: ErrorSubject? { .server(error.subject.address) }
    public var description: String { error.description }
}

extension VaultError {
    /// This error as a ``ReportableError``, for front ends that render every library's errors alike.
    package var reportable: ReportedVaultError { ReportedVaultError(error: self) }
}

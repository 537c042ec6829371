import Foundation
import PushCredentials

/// Judges every credential of a store, as `check` does without arguments, for a long-running
/// exporter: keys from the Secret Service unless told not to, and the store's own files
/// otherwise. It never throws: a store that cannot be read is a failed run.
public struct StoreCheck: Sendable {
    public var store: CredentialStore
    public var warnDays: Int
    public var skipSecrets: Bool

    public init(store: CredentialStore, warnDays: Int = 30, skipSecrets: Bool = false) {
        self.store = store
        self.warnDays = warnDays
        self.skipSecrets = skipSecrets
    }

    public func run(at date: Date = Date()) -> CheckRun {
        let expectations = CheckExpectations(date: date, warnDays: warnDays)
        let stored: [StoredCredential]
        do {
            stored = try store.list()
        } catch let error as CredentialError {
            return .failed(at: date, error.message)
        } catch {
            return .failed(at: date, "The store at \(store.path) cannot be read: \(error).")
        }
        var unreachable: CredentialError?
        var results: [CheckResult] = []
        for credential in stored {
            do {
                if credential.kind == .tokenKey {
                    results.append(checkTokenKey(credential, expectations, &unreachable))
                } else {
                    results.append(try checkCertificate(credential, expectations, &unreachable))
                }
            } catch let error as CredentialError {
                results.append(.failed(name: credential.alias, origin: "store", error: error))
            } catch {
                results.append(
                    .failed(
                        name: credential.alias,
                        origin: "store",
                        error: CredentialError(.corrupt, path: nil, "\(error)")
                    )
                )
            }
        }
        var run = CheckRun(
            date: date,
            results: results,
            secretsAsked: !skipSecrets,
            apps: AppReadiness.verdicts(stored: stored, results: results)
        )
        run.locateFiles(in: store)
        return run
    }

    static func isUnreachable(_ error: CredentialError) -> Bool {
        error.code == .secretStoreUnavailable || error.code == .secretStoreLocked
    }

    private func checkTokenKey(
        _ credential: StoredCredential,
        _ expectations: CheckExpectations,
        _ unreachable: inout CredentialError?
    ) -> CheckResult {
        var present: Bool?
        if !skipSecrets, unreachable == nil {
            do {
                _ = try store.tokenKey(of: credential)
                present = true
            } catch let error as CredentialError where error.code == .secretNotFound {
                present = false
            } catch let error as CredentialError where Self.isUnreachable(error) {
                unreachable = error
            } catch {
                // An incomplete entry is reported by its metadata finding.
            }
        }
        var result = CredentialCheck.tokenKey(credential, keyPresent: present, expectations: expectations)
        if !skipSecrets, let unreachable { result.findings.append(CredentialCheck.secretUnverified(unreachable)) }
        return result
    }

    private func checkCertificate(
        _ credential: StoredCredential,
        _ expectations: CheckExpectations,
        _ unreachable: inout CredentialError?
    ) throws -> CheckResult {
        if !skipSecrets, unreachable == nil {
            do {
                return CredentialCheck.certificate(
                    try store.identity(of: credential),
                    name: credential.alias,
                    origin: "store",
                    keyVerified: true,
                    expectations: expectations
                )
            } catch let error as CredentialError where Self.isUnreachable(error) {
                unreachable = error
            }
        }
        var result = CredentialCheck.certificate(
            try store.certificate(of: credential),
            name: credential.alias,
            origin: "store",
            keyVerified: false,
            expectations: expectations
        )
        if !skipSecrets, let unreachable { result.findings.append(CredentialCheck.secretUnverified(unreachable)) }
        return result
    }
}

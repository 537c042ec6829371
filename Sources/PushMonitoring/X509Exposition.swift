import CredentialFormats
import Foundation
import PushChecks
import PushStore
import PushTeam

/// Which of x509-certificate-exporter's names the metrics give, and its optional series.
///
/// Version 4 (the default) has per-source series (`x509_source_up`, `x509_source_bundles`,
/// `x509_source_errors_total{reason}`, `x509_pkcs12_passphrase_failures_total`) where version 3
/// had `x509_read_errors`, and leaves `x509_cert_not_before` out unless asked. The relative and
/// per-certificate error series are off by default in both, as they are there.
public struct X509Exposition: Sendable, Equatable {
    public enum Names: String, Sendable, CaseIterable {
        case v4, v3
    }

    public var names: Names
    /// Version 4's `metrics.exposeNotBefore`: `x509_cert_not_before` (version 3 always gives it).
    public var notBefore: Bool
    /// `--expose-relative-metrics`: `x509_cert_expires_in_seconds` and `x509_cert_valid_since_seconds`.
    public var relative: Bool
    /// `--expose-per-cert-error-metrics`: `x509_cert_error`, 1 for a certificate that could not be read.
    public var perCertificateError: Bool

    public init(names: Names = .v4, notBefore: Bool = false, relative: Bool = false, perCertificateError: Bool = false)
    {
        self.names = names
        self.notBefore = notBefore
        self.relative = relative
        self.perCertificateError = perCertificateError
    }

    /// Whether `x509_cert_not_before` is given.
    var givesNotBefore: Bool { names == .v3 || notBefore }
}

/// The store as x509-certificate-exporter's source: `source_kind` (`keyring`, `team` or `vault`)
/// and `source_name`, the store's location as the user names it (a folder, or `vault:MOUNT/PREFIX`;
/// never a secret: a Vault location holds no token).
public struct X509Source: Sendable, Equatable {
    public var kind: String
    public var name: String

    public init(kind: String, name: String) {
        self.kind = kind
        self.name = name
    }

    /// The source a store is: in Vault, a team store (git and age), or a folder with its secrets in
    /// the Secret Service.
    public static func of(_ store: CredentialStore) -> X509Source {
        if store.medium != nil { return X509Source(kind: "vault", name: store.path) }
        if TeamStore.isTeamStore(store.root) { return X509Source(kind: "team", name: store.path) }
        return X509Source(kind: "keyring", name: store.path)
    }

    var labels: [(String, String)] { [("source_kind", kind), ("source_name", name)] }
}

/// x509-certificate-exporter's stable reason codes (the `reason` label of
/// `x509_source_errors_total`), for what reading a store and its credentials meets.
public enum X509Reason {
    /// The store (its index, or Vault) could not be read at all.
    public static let readFailed = "read_failed"
    public static let notFound = "not_found"
    public static let badPEM = "bad_pem"
    public static let badPKCS12 = "bad_pkcs12"
    /// A bundle whose stored password no longer opens it.
    public static let badPassphrase = "bad_passphrase"
    public static let noCertificateFound = "no_certificate_found"
    /// Vault or the Secret Service answered with an error for a credential.
    public static let apiError = "api_error"

    /// Every reason apnsctl gives, published at 0 from the first read so that `increase()` sees
    /// the first error (as x509-certificate-exporter does with its own).
    public static let all = [apiError, badPassphrase, badPEM, badPKCS12, noCertificateFound, notFound, readFailed]

    /// Why a credential could not be read, in the exporter's terms; nil for a credential that
    /// was read (a secret the Secret Service does not have is a finding, not a read error).
    public static func of(_ result: CheckResult, secretsAsked: Bool) -> String? {
        guard let error = result.error, error.code != .secretNotFound else { return nil }
        switch error.code {
        case .wrongPassword, .passwordRequired: return badPassphrase
        case .fileNotFound: return notFound
        case .noCertificate: return noCertificateFound
        case .notACertificate, .corrupt, .truncated, .unknownEncryption, .emptyFile, .unsupportedKey:
            // A certificate is read from its bundle when the secrets are asked, else from its PEM.
            return result.kind == .certificate && secretsAsked ? badPKCS12 : badPEM
        case .unreadable, .isDirectory, .notARegularFile, .fileTooLarge: return readFailed
        default: return apiError
        }
    }
}

/// The source's state as the series give it: whether the last read of the store succeeded, the
/// credentials it holds, and the errors met so far by reason (counters: an exporter adds each
/// read's, a one-off check gives its own).
public struct X509SourceStatus: Sendable, Equatable {
    public var source: X509Source
    public var up: Bool
    public var bundles: Int
    public var errors: [String: Int]
    public var passphraseFailures: Int

    public init(source: X509Source, up: Bool, bundles: Int, errors: [String: Int] = [:], passphraseFailures: Int = 0) {
        self.source = source
        self.up = up
        self.bundles = bundles
        self.errors = errors
        self.passphraseFailures = passphraseFailures
    }

    /// One read's errors by reason: the store's when it could not be read, else each credential's.
    public static func errors(of run: CheckRun) -> [String: Int] {
        if run.failure != nil { return [X509Reason.readFailed: 1] }
        var counts: [String: Int] = [:]
        for result in run.results {
            if let reason = X509Reason.of(result, secretsAsked: run.secretsAsked) { counts[reason, default: 0] += 1 }
        }
        return counts
    }

    /// A one-off check's status: that read alone.
    public init(run: CheckRun) {
        let errors = Self.errors(of: run)
        self.init(
            source: run.source ?? X509Source(kind: "keyring", name: ""),
            up: run.failure == nil,
            bundles: run.stored.count,
            errors: errors,
            passphraseFailures: errors[X509Reason.badPassphrase] ?? 0
        )
    }

    /// Adds one read's errors to the counters.
    public mutating func count(_ run: CheckRun) {
        for (reason, count) in Self.errors(of: run) {
            errors[reason, default: 0] += count
            if reason == X509Reason.badPassphrase { passphraseFailures += count }
        }
    }
}

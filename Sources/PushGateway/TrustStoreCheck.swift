import CredentialFormats
import Foundation
import NIOConcurrencyHelpers

/// Whether a trust store holds the roots APNs chains to, per environment, before anything
/// connects: the current root (without it every handshake with APNs fails) and one Apple has
/// announced for a later date (without it they will fail from that date).
public struct TrustStoreCheck: Codable, Sendable {
    /// What was checked: the system's bundle or the one given, and the CA files on top.
    public struct Store: Codable, Sendable {
        public var base: TrustStore.Base
        /// The bundle read; nil when the system has none.
        public var path: String?
        public var caFiles: [String]
        /// Certificates in the store, the CA files' included.
        public var certificates: Int
    }

    /// What a root of the table is to APNs at the check's date.
    public enum Role: String, Codable, Sendable {
        /// Servers of at least one environment chain to it now.
        case current
        /// Announced: servers will chain to it from a later date.
        case upcoming
        /// Servers chained to it before; no longer needed.
        case previous
    }

    public struct Root: Codable, Sendable {
        public var name: String
        public var subject: String
        public var spkiSHA256: String
        public var role: Role
        public var sandboxSince: Date
        public var productionSince: Date
        /// True when the store holds a certificate with this subject and this key.
        public var present: Bool
        public var source: String
    }

    /// One environment's verdict.
    public struct EnvironmentVerdict: Codable, Sendable {
        public var environment: PushEnvironment
        /// The root its servers chain to now.
        public var currentRoot: String
        public var currentRootPresent: Bool
        /// A root announced for a later date, and when.
        public var upcomingRoot: String?
        public var upcomingSince: Date?
        public var upcomingRootPresent: Bool?
        /// The current root is held (an upcoming one missing is a warning, not a failure yet).
        public var ready: Bool
    }

    public var date: Date
    public var store: Store
    public var roots: [Root]
    public var environments: [EnvironmentVerdict]
    /// Every environment checked holds its current root.
    public var ready: Bool
    /// What is missing, in one sentence; nil when nothing is.
    public var problem: String?
    /// An upcoming root missing while the current one is there.
    public var warning: String?
    /// How to add what is missing.
    public var fix: String?

    /// Checks the store `caBundle` (else the system's) plus `caFiles` holds, for each of
    /// `environments`, the root APNs chains to at `date`.
    public static func run(
        environments: [PushEnvironment] = [.sandbox, .production],
        caBundle: String? = nil,
        caFiles: [String] = [],
        at date: Date = Date()
    ) throws -> TrustStoreCheck {
        judge(try TrustStore.load(caBundle: caBundle, caFiles: caFiles), environments: environments, at: date)
    }

    /// The verdict on a loaded store.
    public static func judge(_ store: TrustStore, environments: [PushEnvironment], at date: Date) -> TrustStoreCheck {
        let roots = store.candidates
        let table = APNsTrustRoots.table.map { root -> Root in
            let isCurrent = PushEnvironment.allCases.contains { APNsTrustRoots.current($0, at: date) == root }
            let isUpcoming = PushEnvironment.allCases.contains { APNsTrustRoots.upcoming($0, at: date) == root }
            return Root(
                name: root.name,
                subject: root.subject,
                spkiSHA256: root.spkiSHA256,
                role: isCurrent ? .current : isUpcoming ? .upcoming : .previous,
                sandboxSince: root.sandboxSince,
                productionSince: root.productionSince,
                present: TrustStore.holds(root, in: roots),
                source: root.source
            )
        }
        func present(_ root: APNsTrustRoot) -> Bool { TrustStore.holds(root, in: roots) }
        let verdicts = environments.compactMap { environment -> EnvironmentVerdict? in
            guard let current = APNsTrustRoots.current(environment, at: date) else { return nil }
            let upcoming = APNsTrustRoots.upcoming(environment, at: date)
            return EnvironmentVerdict(
                environment: environment,
                currentRoot: current.name,
                currentRootPresent: present(current),
                upcomingRoot: upcoming?.name,
                upcomingSince: upcoming?.since(environment),
                upcomingRootPresent: upcoming.map(present),
                ready: present(current)
            )
        }
        var check = TrustStoreCheck(
            date: date,
            store: Store(
                base: store.base,
                path: store.basePath,
                caFiles: store.caFiles,
                certificates: store.count
            ),
            roots: table,
            environments: verdicts,
            ready: verdicts.allSatisfy(\.ready)
        )
        let missing = verdicts.filter { !$0.ready }
        let storeName = Self.name(of: store)
        if let first = missing.first {
            let which = missing.map(\.environment.rawValue).joined(separator: " and ")
            check.problem =
                "\(storeName) lacks \"\(first.currentRoot)\", the root APNs \(which) servers chain to: every connection to APNs \(which) would fail its TLS handshake."
            check.fix = fix(for: store, root: first.currentRoot)
        } else if let late = verdicts.first(where: { $0.upcomingRootPresent == false }), let root = late.upcomingRoot {
            let when = late.upcomingSince.map { " from \(TrustStoreCheck.day($0))" } ?? ""
            check.warning =
                "\(storeName) lacks \"\(root)\", the root APNs \(late.environment) servers chain to\(when): connections will fail from then."
            check.fix = fix(for: store, root: root)
        }
        return check
    }

    /// The store in words: the system's bundle (with its path), or the bundle given.
    static func name(of store: TrustStore) -> String {
        switch store.base {
        case .system:
            guard let path = store.basePath else { return "This system has no trust store, and so it" }
            return "The system's trust store (\(path))"
        case .bundle:
            return "The CA bundle \(store.basePath ?? "given")"
        }
    }

    /// How to add `root` to the store checked.
    static func fix(for store: TrustStore, root: String) -> String {
        switch store.base {
        case .system where store.basePath == nil:
            return
                "Install the ca-certificates package (apt install ca-certificates, or dnf install ca-certificates), which carries \"\(root)\"."
        case .system:
            return
                "Update the ca-certificates package (apt install --only-upgrade ca-certificates, then update-ca-certificates; on Fedora or RHEL update-ca-trust), or put the \"\(root)\" certificate in /usr/local/share/ca-certificates/ and run update-ca-certificates."
        case .bundle:
            return
                "Add the \"\(root)\" certificate to \(store.basePath ?? "the bundle"), or build the bundle again from an up-to-date ca-certificates package (/etc/ssl/certs/ca-certificates.crt)."
        }
    }

    static func day(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_GB_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "d MMMM yyyy"
        return formatter.string(from: date)
    }
}

extension TrustStoreCheck {
    private static let cache = NIOLockedValueBox<(key: String, store: TrustStore)?>(nil)

    /// The check of the system's trust store for both environments, its bundle read again only
    /// when the file changed (a metrics endpoint asks at every scrape). Nil when it cannot be read.
    public static func systemCached(at date: Date = Date()) -> TrustStoreCheck? {
        let path = TrustStore.systemSearchPaths.first { FileManager.default.isReadableFile(atPath: $0) }
        let attributes = path.flatMap { try? FileManager.default.attributesOfItem(atPath: $0) }
        let key = [
            path ?? "", "\((attributes?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0)",
            "\(attributes?[.size] as? Int ?? 0)",
        ].joined(separator: "|")
        let store: TrustStore
        if let cached = cache.withLockedValue({ $0 }), cached.key == key {
            store = cached.store
        } else {
            guard let loaded = try? TrustStore.load() else { return nil }
            cache.withLockedValue { $0 = (key, loaded) }
            store = loaded
        }
        return judge(store, environments: PushEnvironment.allCases, at: date)
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Every connection is a file descriptor: the cap on connections must leave room under the
/// process's limit for the listener, the log, the event loops' own descriptors and the
/// connection that arrives at the cap (it is accepted before the one it replaces is closed).
/// Without that room, accept fails (EMFILE) and the listener backs off for a second at a time,
/// so that nobody, however well-behaved, gets in. Every server here (the local gateway, the
/// exporter) caps its connections with it.
package enum DescriptorBudget {
    /// Descriptors kept out of the connections' share.
    package static let reserve = 64

    /// The cap to enforce for `wanted` connections: the soft RLIMIT_NOFILE is raised (up to the
    /// hard limit) when it is too low for them, and the cap lowered when even the hard limit is.
    package static func connectionCap(for wanted: Int) -> Int {
        let wanted = max(1, wanted)
        var limit = rlimit()
        guard getrlimit(resourceLimit, &limit) == 0 else { return wanted }
        let needed = rlim_t(wanted + reserve)
        // rlim_t.max is RLIM_INFINITY, a macro Swift does not import.
        if limit.rlim_cur != rlim_t.max, limit.rlim_cur < needed {
            var raised = limit
            raised.rlim_cur = limit.rlim_max == rlim_t.max ? needed : min(needed, limit.rlim_max)
            if setrlimit(resourceLimit, &raised) == 0 { limit = raised }
        }
        guard limit.rlim_cur != rlim_t.max else { return wanted }
        let available = Int(clamping: limit.rlim_cur) - reserve
        return max(1, min(wanted, available))
    }

    /// The process's soft limit on open files (`ulimit -n`); nil when it has none or it cannot
    /// be read.
    package static var openFileLimit: Int? {
        var limit = rlimit()
        guard getrlimit(resourceLimit, &limit) == 0, limit.rlim_cur != rlim_t.max else { return nil }
        return Int(clamping: limit.rlim_cur)
    }

    #if canImport(Glibc)
    private static let resourceLimit = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    private static let resourceLimit = RLIMIT_NOFILE
    #endif
}

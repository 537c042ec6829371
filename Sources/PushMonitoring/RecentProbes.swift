/// The last probes made (connections, not the cached answers given in between), newest first,
/// for the status page: at most `capacity`, so that no sequence of scrapes can grow it. A
/// result holds no secret and no device token (the auth check's made-up token is not kept).
struct RecentProbes: Sendable {
    static let defaultCapacity = 20

    let capacity: Int
    private(set) var results: [ProbeResult] = []

    init(capacity: Int = Self.defaultCapacity) {
        self.capacity = max(1, capacity)
    }

    mutating func record(_ result: ProbeResult) {
        results.insert(result, at: 0)
        if results.count > capacity { results.removeLast(results.count - capacity) }
    }
}

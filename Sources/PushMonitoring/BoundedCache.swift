/// A dictionary that never holds more than `capacity` entries: storing a new key when it is
/// full forgets the least recently stored one. For what a long-running server remembers per
/// request parameter, so that no sequence of requests can grow it without end.
struct BoundedCache<Key: Hashable, Value> {
    let capacity: Int
    private var entries: [Key: (value: Value, stamp: UInt64)] = [:]
    private var clock: UInt64 = 0

    init(capacity: Int) {
        precondition(capacity > 0, "a cache holds at least one entry")
        self.capacity = capacity
    }

    var count: Int { entries.count }

    subscript(key: Key) -> Value? {
        get { entries[key]?.value }
        set {
            guard let newValue else {
                entries[key] = nil
                return
            }
            clock &+= 1
            if entries[key] == nil, entries.count >= capacity,
                let oldest = entries.min(by: { $0.value.stamp < $1.value.stamp })?.key
            {
                entries[oldest] = nil
            }
            entries[key] = (newValue, clock)
        }
    }

    /// Forgets every entry whose key `keep` refuses.
    mutating func retain(where keep: (Key) -> Bool) {
        entries = entries.filter { keep($0.key) }
    }
}

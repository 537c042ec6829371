/// A channel's user event as `T`, when that is its type; nil otherwise.
///
/// Every handler after swift-nio-http2's sees several user events per stream (created, window
/// updated, closed), and `event as? T` on a value of another type costs a full dynamic cast,
/// some 350 instructions, for each handler and event. Comparing the event's type first is a
/// pointer comparison, and only the event a handler waits for is cast.
@inlinable
package func userEvent<T>(_ event: Any, as type: T.Type) -> T? {
    guard ObjectIdentifier(Swift.type(of: event)) == ObjectIdentifier(type) else { return nil }
    return event as? T
}
